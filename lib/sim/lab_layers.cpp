// The lab models' layers and fused runs (see lab_layers.h).
#include "sim/lab_layers.h"

#include <algorithm>

#include "nn/batch_norm.h"
#include "nn/dense.h"
#include "nn/dropout.h"
#include "nn/flatten.h"
#include "nn/global_avg_pool.h"
#include "nn/maxpool2d.h"
#include "nn/relu.h"
#include "nn/residual_block.h"

namespace scalelab::sim {

LabLayers lab_layers() {
  LabLayers out;
  const auto same_conv = [](const LabLayers::Conv& a, const LabLayers::Conv& b) {
    return a.in == b.in && a.first == b.first && a.options.filters == b.options.filters && a.options.kernel == b.options.kernel &&
           a.options.stride == b.options.stride && a.options.pad == b.options.pad &&
           a.options.activation == b.options.activation && a.options.bias == b.options.bias;
  };
  const auto add_conv = [&](const LabLayers::Conv& c) {
    if (std::none_of(out.convs.begin(), out.convs.end(), [&](const auto& x) { return same_conv(x, c); })) out.convs.push_back(c);
  };
  const auto add_memory = [&](LayerKind kind, const std::string& what, std::function<std::unique_ptr<nn::Layer>()> make,
                               const nn::Shape& in) {
    if (std::none_of(out.memory.begin(), out.memory.end(), [&](const auto& x) { return x.what == what && x.in == in; })) {
      out.memory.push_back({kind, what, std::move(make), in});
    }
  };
  const auto add_norm = [&](const nn::Shape& in) {
    add_memory(LayerKind::norm, "BatchNorm", [] { return std::make_unique<nn::BatchNorm>(); }, in);
  };
  for (const std::string& name : nn::model_names()) {
    const auto m = nn::make_model(name, nn::Shape{1, 28, 28}, 10, 1);
    for (std::size_t i = 0; i < m->layer_count(); ++i) {
      const nn::Layer& l = m->layer(i);
      const nn::Shape in = i ? m->layer_output_shape(i - 1) : m->input_shape();
      if (const auto* c = dynamic_cast<const nn::Conv2D*>(&l)) add_conv({c->options(), in, i == 0});
      if (const auto* d = dynamic_cast<const nn::Dense*>(&l)) {
        const LabLayers::Dense x{m->layer_output_shape(i)[0], d->activation(), in, i == 0};
        if (std::none_of(out.denses.begin(), out.denses.end(), [&](const auto& y) {
              return y.units == x.units && y.activation == x.activation && y.in == x.in && y.first == x.first;
            })) {
          out.denses.push_back(x);
        }
      }
      if (dynamic_cast<const nn::BatchNorm*>(&l) != nullptr) add_norm(in);
      if (dynamic_cast<const nn::ReLU*>(&l) != nullptr) {
        add_memory(LayerKind::elementwise, "ReLU", [] { return std::make_unique<nn::ReLU>(); }, in);
      }
      if (const auto* d = dynamic_cast<const nn::Dropout*>(&l)) {
        const float rate = d->rate();
        add_memory(LayerKind::elementwise, "Dropout " + std::to_string(rate), [rate] { return std::make_unique<nn::Dropout>(rate); }, in);
      }
      if (const auto* p = dynamic_cast<const nn::MaxPool2D*>(&l)) {
        const std::size_t pool = p->pool(), stride = p->stride();
        add_memory(LayerKind::pool, "MaxPool2D " + std::to_string(pool) + " " + std::to_string(stride),
                   [pool, stride] { return std::make_unique<nn::MaxPool2D>(pool, stride); }, in);
      }
      if (dynamic_cast<const nn::GlobalAvgPool*>(&l) != nullptr) {
        add_memory(LayerKind::pool, "GlobalAvgPool", [] { return std::make_unique<nn::GlobalAvgPool>(); }, in);
      }
      if (const auto* b = dynamic_cast<const nn::ResidualBlock*>(&l)) {
        for (const auto& part : b->parts()) {
          if (part.name == "conv1") add_conv({b->conv1().options(), part.in, false});
          if (part.name == "conv2") add_conv({b->conv2().options(), part.in, false});
          if (part.name == "shortcut") add_conv({b->shortcut().options(), part.in, false});
          if (part.type == "BatchNormalization") add_norm(part.in);
        }
      }
    }
  }
  return out;
}

namespace {

// A copy of a layer that fusion joins (nn::Model::fused_groups: convolutions and max-pools), or
// null for a kind it does not join.
std::unique_ptr<nn::Layer> copy_of(const nn::Layer& l) {
  if (const auto* c = dynamic_cast<const nn::Conv2D*>(&l)) return std::make_unique<nn::Conv2D>(c->options());
  if (const auto* p = dynamic_cast<const nn::MaxPool2D*>(&l)) return std::make_unique<nn::MaxPool2D>(p->pool(), p->stride());
  return nullptr;
}

}  // namespace

std::vector<std::unique_ptr<nn::Model>> lab_fused_runs() {
  std::vector<std::unique_ptr<nn::Model>> out;
  std::vector<std::vector<WorkloadLayer>> seen;
  for (const std::string& name : nn::model_names()) {
    const auto m = nn::make_model(name, nn::Shape{1, 28, 28}, 10, 1);
    std::size_t first = 0;
    while (first < m->layer_count() && m->layer(first).aliases_input()) ++first;
    for (const auto& [a, b] : m->fused_groups()) {
      if (a != first) continue;
      const nn::Shape in = a ? m->layer_output_shape(a - 1) : m->input_shape();
      auto run = std::make_unique<nn::Model>(name + " fused " + std::to_string(a) + "-" + std::to_string(b), in,
                                             m->layer_output_shape(b).numel(), 1);
      bool copied = true;
      for (std::size_t i = a; i <= b && copied; ++i) {
        auto l = copy_of(m->layer(i));
        copied = l != nullptr;
        if (copied) run->add(std::move(l));
      }
      if (!copied) continue;
      run->add(std::make_unique<nn::Flatten>());
      run->build();
      std::vector<WorkloadLayer> layers = workload_from_model(*run).layers;
      const auto same = [&](const std::vector<WorkloadLayer>& x) {
        return x.size() == layers.size() && std::equal(x.begin(), x.end(), layers.begin(), [](const auto& p, const auto& q) {
                 return p.kind == q.kind && p.forward_flops == q.forward_flops && p.params == q.params &&
                        p.in_elems == q.in_elems && p.out_elems == q.out_elems;
               });
      };
      if (std::any_of(seen.begin(), seen.end(), same)) continue;
      seen.push_back(std::move(layers));
      out.push_back(std::move(run));
    }
  }
  return out;
}

}  // namespace scalelab::sim
