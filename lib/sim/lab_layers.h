// What the lab models (nn::model_names, on Fashion-MNIST's 1x28x28 input) run, for
// `scalelab calibrate` to time (sim/cpu_rates.h): their convolutions, dense layers and memory-bound
// layers, each shape once, and the runs of layers the engine fuses, each rebuilt as a model of its
// own so that the fused code runs as in training.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "nn/conv2d.h"
#include "nn/layer.h"
#include "nn/model.h"
#include "sim/workload.h"

namespace scalelab::sim {

struct LabLayers {
  struct Conv {
    nn::Conv2DOptions options;
    nn::Shape in;
    bool first = false;  // a model's first layer: no input gradient in training
  };
  struct Dense {
    std::size_t units = 0;
    nn::Activation activation = nn::Activation::none;
    nn::Shape in;
    bool first = false;
  };
  // A memory-bound layer: its kind, how to make one like it, and its input.
  struct Memory {
    LayerKind kind = LayerKind::elementwise;
    std::string what;  // type and settings, to tell repeats apart ("Dropout 0.25")
    std::function<std::unique_ptr<nn::Layer>()> make;
    nn::Shape in;
  };
  std::vector<Conv> convs;
  std::vector<Dense> denses;
  std::vector<Memory> memory;
};

// Every shape once, in the models' order.
[[nodiscard]] LabLayers lab_layers();

// The runs of layers fusion makes one unit (nn::Model::fused_groups), each once, as models of their
// own (a Flatten last, so that the run's output is the model's "logits"). Only runs that begin at a
// model's first computing layer: training computes no input gradient there, and neither does a
// model of its own, so the run is timed as it runs (the lab models have no other).
[[nodiscard]] std::vector<std::unique_ptr<nn::Model>> lab_fused_runs();

}  // namespace scalelab::sim
