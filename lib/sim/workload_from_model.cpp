// lib/nn's models as workloads (see workload.h): one workload layer per nn layer, with nn's own
// forward FLOPs (Layer::flops) and parameter counts, so the simulator prices exactly what
// `scalelab train` runs. Flatten is a reshape that nn passes through without touching memory,
// so it has no entry. A ResidualBlock is listed step by step ("residual_block.conv1", ...,
// "residual_block.add_relu"), so its batch norms and add are priced as memory-bound steps.
#include "nn/conv2d.h"
#include "nn/dense.h"
#include "nn/model.h"
#include "nn/residual_block.h"
#include "sim/workload.h"

#include "core/error.h"

namespace scalelab::sim {

namespace {

LayerKind kind_of(const std::string& t) {
  if (t == "Conv2D") return LayerKind::conv;
  if (t == "Dense") return LayerKind::matmul;
  if (t == "MaxPooling2D" || t == "GlobalAveragePooling2D") return LayerKind::pool;
  if (t == "BatchNormalization") return LayerKind::norm;
  if (t == "ReLU" || t == "Dropout" || t == "Flatten" || t == "Add+ReLU") return LayerKind::elementwise;
  throw_runtime("workload_from_model: nn layer type " + t + " has no workload kind; add it to lib/sim/workload_from_model.cpp");
}

}  // namespace

Workload workload_from_model(const nn::Model& m) {
  Workload w;
  w.name = m.name();
  const nn::Shape& in = m.input_shape();
  w.title = "lab model " + m.name() + " (lib/nn), input " + in.str() + ", " + std::to_string(m.num_classes()) + " classes";
  w.unit = "images";
  for (int d = 0; d < in.rank(); ++d) w.input_shape.push_back(in[d]);
  w.sources = {"lib/nn/model_zoo.cpp (nn::make_model)"};
  for (std::size_t i = 0; i < m.layer_count(); ++i) {
    const nn::Layer& l = m.layer(i);
    const nn::Shape& layer_in = i ? m.layer_output_shape(i - 1) : in;
    if (l.aliases_input()) continue;
    if (const auto* block = dynamic_cast<const nn::ResidualBlock*>(&l)) {
      for (const auto& p : block->parts()) {
        w.layers.push_back({m.layer_name(i) + "." + p.name, kind_of(p.type), p.forward_flops, p.params,
                            p.type == "Add+ReLU" ? 2.0 * double(p.out.numel()) : double(p.in.numel()),
                            double(p.out.numel()), ""});
      }
      continue;
    }
    WorkloadLayer wl;
    wl.name = m.layer_name(i);
    wl.kind = kind_of(l.type());
    wl.forward_flops = l.flops(layer_in).forward;
    wl.params = l.parameter_count();
    wl.in_elems = static_cast<double>(layer_in.numel());
    wl.out_elems = static_cast<double>(m.layer_output_shape(i).numel());
    // Keras' activation= inside the layer (nn fuses it; a GPU framework runs it as a pass of its own).
    nn::Activation act = nn::Activation::none;
    if (const auto* conv = dynamic_cast<const nn::Conv2D*>(&l)) act = conv->options().activation;
    if (const auto* dense = dynamic_cast<const nn::Dense*>(&l)) act = dense->activation();
    if (act == nn::Activation::relu) wl.activation = "relu";
    w.layers.push_back(wl);
  }
  return w;
}

}  // namespace scalelab::sim
