// Model: building, buffers, forward/backward through the layer sequence, FLOPs and the summary
// (see model.h). make_model lives in model_zoo.cpp.
#include "nn/model.h"

#include <fmt/format.h>

#include <algorithm>
#include <ostream>
#include <sstream>

#include "nn/conv2d.h"
#include "nn/maxpool2d.h"

namespace scalelab::nn {

Model::Model(std::string name, const Shape& input_shape, std::size_t num_classes, std::uint64_t seed)
    : name_(std::move(name)), input_shape_(input_shape), num_classes_(num_classes), seed_(seed) {}

void Model::add(std::unique_ptr<Layer> layer) {
  if (built_) throw_runtime("Model " + name_ + ": add() after build()");
  Shape in = out_shapes_.empty() ? input_shape_ : out_shapes_.back();
  out_shapes_.push_back(layer->output_shape(in));
  // Keras-style names: conv2d, conv2d_1, dense, dense_1 ...
  std::string base = layer->type();
  std::string lower;
  for (std::size_t i = 0; i < base.size(); ++i) {
    char c = base[i];
    if (std::isupper(static_cast<unsigned char>(c)) && i > 0 && !std::isupper(static_cast<unsigned char>(base[i - 1])) &&
        !std::isdigit(static_cast<unsigned char>(base[i - 1])))
      lower += '_';
    lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  std::size_t same = 0;
  for (const auto& l : layers_) same += l->type() == base;
  layer_names_.push_back(same ? lower + "_" + std::to_string(same) : lower);
  layers_.push_back(std::move(layer));
}

void Model::build() {
  if (built_) return;
  if (out_shapes_.empty()) throw_runtime("Model " + name_ + ": no layers");
  if (out_shapes_.back().rank() != 1 || out_shapes_.back()[0] != num_classes_)
    throw_runtime("Model " + name_ + ": the last layer gives " + out_shapes_.back().str() + ", not (" +
                  std::to_string(num_classes_) + ")");
  layer_params_.resize(layers_.size());
  for (std::size_t i = 0; i < layers_.size(); ++i) {
    const std::size_t before = params_.count();
    layers_[i]->declare(params_, layer_names_[i], i ? out_shapes_[i - 1] : input_shape_);
    layer_params_[i] = {before, params_.count()};
  }
  params_.finalize();
  while (first_compute_ + 1 < layers_.size() && layers_[first_compute_]->aliases_input()) ++first_compute_;
  fused_.assign(layers_.size(), {nullptr, nullptr});
  for (std::size_t i = 0; i + 1 < layers_.size(); ++i) {
    auto* conv = dynamic_cast<Conv2D*>(layers_[i].get());
    auto* pool = dynamic_cast<MaxPool2D*>(layers_[i + 1].get());
    if (conv != nullptr && pool != nullptr) fused_[i] = {conv, pool};
    auto* next = dynamic_cast<Conv2D*>(layers_[i + 1].get());
    if (conv != nullptr && next != nullptr && conv->options().activation == Activation::relu)
      relu_chained_.emplace_back(conv, next);
  }
  const std::size_t a = first_compute_;
  if (a + 2 < layers_.size() && fused_[a + 1].first != nullptr) {
    auto* first = dynamic_cast<Conv2D*>(layers_[a].get());
    if (first != nullptr && first->options().activation == Activation::relu) chain_ = a;
  }
  set_fusion(true);
  // One stream for initial values, another per layer for its randomness: adding a Dropout does
  // not change the initial weights of the other layers.
  Rng init_rng(seed_, 0);
  for (auto& l : layers_) l->initialize(params_, init_rng);
  reseed(seed_, 0);
  built_ = true;
}

void Model::set_fusion(bool on) {
  if (on != fusion_) reserved_batch_ = 0;  // the fused convolutions' outputs come and go
  fusion_ = on;
  for (const auto& [conv, pool] : fused_) {
    if (conv == nullptr) continue;
    const bool mask = on && conv->options().activation == Activation::relu;
    pool->set_applies_relu_mask(mask);
    conv->set_output_gradient_masked(mask);
  }
  for (const auto& [conv, next] : relu_chained_) {
    conv->set_output_gradient_masked(on);
    next->set_input_gradient_relu_mask(on);
  }
}

std::vector<std::pair<std::size_t, std::size_t>> Model::fused_groups() const {
  const auto index_of = [&](const Layer* l) {
    for (std::size_t i = 0; i < layers_.size(); ++i) {
      if (layers_[i].get() == l) return i;
    }
    throw_runtime("Model " + name_ + ": a fused layer is not one of its layers");
  };
  std::vector<bool> with_next(layers_.size(), false);  // layer i runs fused with layer i + 1
  for (std::size_t i = 0; i < fused_.size(); ++i) {
    if (fused_[i].first != nullptr) with_next[i] = true;
  }
  for (const auto& [conv, next] : relu_chained_) with_next[index_of(conv)] = true;
  if (chain_ != kNoChain) with_next[chain_] = true;
  std::vector<std::pair<std::size_t, std::size_t>> groups;
  for (std::size_t i = 0; i < layers_.size(); ++i) {
    if (!with_next[i]) continue;
    std::size_t last = i + 1;
    while (last < layers_.size() && with_next[last]) ++last;
    groups.emplace_back(i, last);
    i = last;
  }
  return groups;
}

void Model::reseed(std::uint64_t seed, std::uint64_t stream) {
  for (std::size_t i = 0; i < layers_.size(); ++i) layers_[i]->reseed(layer_seed(seed, i), stream);
}

void Model::skip_random(std::uint64_t forwards) {
  for (auto& l : layers_) l->skip_random(forwards);
}

void Model::set_statistics_reducer(const StatisticsReducer& reducer) {
  for (auto& l : layers_) l->set_statistics_reducer(reducer);
}

bool Model::uses_batch_statistics() const {
  return std::any_of(layers_.begin(), layers_.end(), [](const auto& l) { return l->uses_batch_statistics(); });
}

void Model::reserve(std::size_t max_batch) {
  if (!built_) build();
  if (max_batch <= reserved_batch_) return;
  acts_.resize(layers_.size());
  std::size_t biggest = 0;  // the largest input gradient backward writes, per image
  for (std::size_t i = 0; i < layers_.size(); ++i) {
    const Shape& in = i ? out_shapes_[i - 1] : input_shape_;
    layers_[i]->reserve(in, max_batch);
    // A convolution fused with its pool keeps no output of its own (set_fusion re-reserves), and
    // the pool's input gradient is never written (Conv2D::backward_pooled).
    // Chained (chain_), the first convolution keeps no output either, and the second's input
    // gradient stays in its chunk buffers.
    const bool fused_conv = fusion_ && fused_[i].first != nullptr;
    const bool fused_pool = fusion_ && i > 0 && fused_[i - 1].first != nullptr;
    const bool kept = !layers_[i]->aliases_input() && !fused_conv && !chained(i);
    acts_[i].resize(kept ? out_shapes_[i].with_batch(max_batch) : Shape{0});
    if (i > first_compute_ && !fused_pool && !layers_[i]->aliases_input() && !chained(i - 1))
      biggest = std::max(biggest, in.numel());
  }
  if (chained(chain_)) {
    auto& second = *fused_[chain_ + 1].first;
    second.reserve_chain(*dynamic_cast<Conv2D*>(layers_[chain_].get()), chain_ ? out_shapes_[chain_ - 1] : input_shape_,
                         max_batch);
  }
  for (auto& g : grad_buf_) g.resize(Shape{max_batch * biggest});
  views_.resize(layers_.size());
  reserved_batch_ = max_batch;
}

ConstTensorView Model::forward(ConstTensorView input, bool training) {
  if (!(input.shape.without_batch() == input_shape_))
    throw_usage("model " + name_ + " expects inputs " + input_shape_.str() + " per sample, got " +
                input.shape.without_batch().str());
  const std::size_t n = input.batch();
  reserve(n);
  last_input_ = input;
  forward_fused_ = fusion_;
  ConstTensorView cur = input;
  for (std::size_t i = 0; i < layers_.size(); ++i) {
    Shape s = out_shapes_[i].with_batch(n);
    if (layers_[i]->aliases_input()) {
      views_[i] = {cur.data, s};
    } else if (chained(i)) {
      // The convolution after this one computes this one's output chunk by chunk and pools it.
      TensorView pooled{acts_[i + 2].data(), out_shapes_[i + 2].with_batch(n)};
      fused_[i + 1].first->forward_pooled_after(*dynamic_cast<Conv2D*>(layers_[i].get()), cur, *fused_[i + 1].second,
                                                pooled);
      views_[i] = {nullptr, s};
      views_[i + 1] = {nullptr, out_shapes_[i + 1].with_batch(n)};
      i += 2;
      views_[i] = pooled;
    } else if (fusion_ && fused_[i].first != nullptr) {
      // The convolution pools each chunk of images as soon as it has computed it; its own output
      // is never kept whole (backward does not need it).
      TensorView pooled{acts_[i + 1].data(), out_shapes_[i + 1].with_batch(n)};
      fused_[i].first->forward_pooled(cur, *fused_[i].second, pooled);
      views_[i] = {nullptr, s};
      views_[++i] = pooled;
    } else {
      TensorView out{acts_[i].data(), s};
      layers_[i]->forward(cur, out, training);
      views_[i] = out;
    }
    cur = views_[i];
  }
  return cur;
}

void Model::backward(ConstTensorView dlogits, const std::function<void(std::size_t param)>& on_final) {
  if (views_.empty() || !(dlogits.shape == views_.back().shape))
    throw_runtime("Model " + name_ + ": backward() needs dlogits shaped like the last forward's logits");
  if (forward_fused_ != fusion_)
    throw_runtime("Model " + name_ + ": set_fusion() between forward() and backward(); change it between steps");
  ConstTensorView dout = dlogits;
  int next = 0;  // which ping-pong buffer receives the next input gradient
  for (std::size_t i = layers_.size(); i-- > 0;) {
    ConstTensorView in = i ? views_[i - 1] : last_input_;
    if (layers_[i]->aliases_input()) {
      dout = {dout.data, in.shape};
      continue;
    }
    // A pool fused with the convolution before it: the convolution takes the pool's output
    // gradient and routes it chunk by chunk (Conv2D::backward_pooled); both layers are done.
    const bool pooled = forward_fused_ && i > 0 && fused_[i - 1].first != nullptr;
    if (pooled && chain_ != kNoChain && i == chain_ + 2) {  // forward_fused_: pooled says so
      // The chained pair and its pool: all three layers' gradients, no input gradient.
      const ConstTensorView x = chain_ ? views_[chain_ - 1] : last_input_;
      fused_[chain_ + 1].first->backward_pooled_after(*dynamic_cast<Conv2D*>(layers_[chain_].get()), x,
                                                       *fused_[chain_ + 1].second, views_[i], dout);
      if (on_final) {
        for (std::size_t l = i + 1; l-- > chain_;)
          for (std::size_t p = layer_params_[l].second; p-- > layer_params_[l].first;) on_final(p);
      }
      dout = {};
      i = chain_;
      continue;
    }
    const std::size_t at = pooled ? i - 1 : i;  // the layer whose input gradient comes out
    if (pooled) in = at ? views_[at - 1] : last_input_;
    TensorView din;  // none for the first computing layer: nobody needs the model's input gradient
    if (at > first_compute_) {
      din = {grad_buf_[next].data(), in.shape};
      next ^= 1;
    }
    if (pooled)
      fused_[at].first->backward_pooled(in, *fused_[at].second, views_[i], dout, din);
    else
      layers_[i]->backward(in, views_[i], dout, din);
    if (on_final) {
      for (std::size_t l = i + 1; l-- > at;)
        for (std::size_t p = layer_params_[l].second; p-- > layer_params_[l].first;) on_final(p);
    }
    dout = din;
    i = at;
  }
}

FlopCount Model::flops_per_image() const {
  FlopCount total;
  for (std::size_t i = 0; i < layers_.size(); ++i) {
    FlopCount f = layers_[i]->flops(i ? out_shapes_[i - 1] : input_shape_);
    total.forward += f.forward;
    total.backward_params += f.backward_params;
    if (i > first_compute_) total.backward_input += f.backward_input;
  }
  return total;
}

void Model::print_summary(std::ostream& os) const {
  // The first column fits the longest "name (Type)", as Keras widens it.
  std::size_t col = 30;
  for (std::size_t i = 0; i < layers_.size(); ++i)
    col = std::max(col, layer_names_[i].size() + layers_[i]->type().size() + 5);
  const std::string rule(col + 39, '_'), thick(col + 39, '=');
  os << "Model: \"" << name_ << "\"\n" << rule << "\n";
  os << fmt::format(" {:<{}}{:<26}{:>12}\n", "Layer (type)", col, "Output Shape", "Param #") << thick << "\n";
  std::size_t total = 0;
  for (std::size_t i = 0; i < layers_.size(); ++i) {
    std::string shape = out_shapes_[i].str();
    shape = "(None, " + shape.substr(1);
    std::size_t p = layers_[i]->parameter_count();
    total += p;
    os << fmt::format(" {:<{}}{:<26}{:>12}\n", layer_names_[i] + " (" + layers_[i]->type() + ")", col, shape, p);
    os << (i + 1 < layers_.size() ? "\n" : "");
  }
  FlopCount f = flops_per_image();
  os << thick << "\n";
  os << "Total params: " << total << " (" << fmt::format("{:.2f}", total * 4.0 / 1048576.0) << " MiB)\n";
  os << "Trainable params: " << total << "\nNon-trainable params: " << params_.state().size() << "\n";
  os << fmt::format("FLOPs per image: {:.2f} M forward, {:.2f} M forward+backward\n", f.forward / 1e6,
                    (f.forward + f.backward()) / 1e6);
  os << rule << "\n";
}

std::string Model::summary() const {
  std::ostringstream os;
  print_summary(os);
  return os.str();
}

}  // namespace scalelab::nn
