// make_model: the named models (see model.h for what each one is and why it exists).
#include "nn/model.h"

#include <functional>

#include "nn/batch_norm.h"
#include "nn/conv2d.h"
#include "nn/dense.h"
#include "nn/dropout.h"
#include "nn/flatten.h"
#include "nn/global_avg_pool.h"
#include "nn/maxpool2d.h"
#include "nn/relu.h"
#include "nn/residual_block.h"

namespace scalelab::nn {
namespace {

std::unique_ptr<Layer> conv(std::size_t filters, std::size_t k, Activation act, bool bias = true, std::size_t pad = 0) {
  Conv2DOptions o;
  o.filters = filters;
  o.kernel = k;
  o.pad = pad;
  o.activation = act;
  o.bias = bias;
  return std::make_unique<Conv2D>(o);
}

// The course's Keras model (and tests/perf/torch_cnn_gpu.py's): same layers, same sizes.
void build_cnn(Model& m, std::size_t classes) {
  m.add(conv(32, 3, Activation::relu));
  m.add(conv(64, 3, Activation::relu));
  m.add(std::make_unique<MaxPool2D>(2));
  m.add(std::make_unique<Dropout>(0.25f));
  m.add(std::make_unique<Flatten>());
  m.add(std::make_unique<Dense>(128, Activation::relu));
  m.add(std::make_unique<Dropout>(0.5f));
  m.add(std::make_unique<Dense>(classes, Activation::none, Init::glorot_uniform));
}

void build_mlp(Model& m, std::size_t classes) {
  m.add(std::make_unique<Flatten>());
  m.add(std::make_unique<Dense>(256, Activation::relu));
  m.add(std::make_unique<Dense>(128, Activation::relu));
  m.add(std::make_unique<Dense>(classes, Activation::none, Init::glorot_uniform));
}

// A linear classifier: ~8k multiply-adds per image, so the input pipeline sets the pace.
void build_trivial(Model& m, std::size_t classes) {
  m.add(std::make_unique<Flatten>());
  m.add(std::make_unique<Dense>(classes, Activation::none, Init::glorot_uniform));
}

// A small ResNet for 28x28 (or 32x32) images: 16 -> 32/2 -> 64/2 channels, ~80k parameters.
void build_resnet(Model& m, std::size_t classes) {
  m.add(conv(16, 3, Activation::none, false, 1));
  m.add(std::make_unique<BatchNorm>());
  m.add(std::make_unique<ReLU>());
  m.add(std::make_unique<ResidualBlock>(16, 1));
  m.add(std::make_unique<ResidualBlock>(32, 2));
  m.add(std::make_unique<ResidualBlock>(64, 2));
  m.add(std::make_unique<GlobalAvgPool>());
  m.add(std::make_unique<Dense>(classes, Activation::none, Init::glorot_uniform));
}

struct Entry {
  const char* name;
  std::function<void(Model&, std::size_t)> build;
};

const std::vector<Entry>& zoo() {
  static const std::vector<Entry> kModels = {
      {"cnn", build_cnn}, {"mlp", build_mlp}, {"trivial", build_trivial}, {"resnet", build_resnet}};
  return kModels;
}

}  // namespace

const std::vector<std::string>& model_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const auto& e : zoo()) v.emplace_back(e.name);
    return v;
  }();
  return names;
}

std::unique_ptr<Model> make_model(const std::string& name, const Shape& input_shape, std::size_t num_classes,
                                  std::uint64_t seed) {
  for (const auto& e : zoo()) {
    if (name != e.name) continue;
    if (input_shape.rank() != 3 || input_shape.numel() == 0)
      throw_usage("model " + name + ": the input shape must be (channels, height, width), got " + input_shape.str());
    if (num_classes < 2) throw_usage("model " + name + ": at least 2 classes are needed, got " + std::to_string(num_classes));
    auto m = std::make_unique<Model>(name, input_shape, num_classes, seed);
    e.build(*m, num_classes);
    m->build();
    return m;
  }
  std::string known;
  for (const auto& n : model_names()) known += (known.empty() ? "" : ", ") + n;
  throw_parameter(ErrorKind::usage, "model", name + ": unknown model; choose one of " + known);
}

}  // namespace scalelab::nn
