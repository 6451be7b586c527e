// The device catalog's convolution fractions against the single-GPU figures that set them
// (docs/simulator.md, "Achievable fractions"): each fraction is the one with which the step model
// reproduces its published figure, so a change to the step model, the workload or the device
// file that moves the answer fails here, printing the fraction that would reproduce the figure
// again. Only these figures may set a constant; every multi-GPU figure is a check
// (docs/validation.md).
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "sim/device.h"
#include "sim/step_model.h"
#include "sim/workload.h"

namespace scalelab::sim {
namespace {

struct SourceFigure {
  std::string device;
  Precision precision;
  double images_per_s;  // one GPU, as published
  std::string where;
  std::size_t batch = 256;  // per GPU, the recipe's
};

// NVIDIA DeepLearningExamples, PyTorch/Classification/ConvNets/resnet50v1.5/README.md, "Training
// performance", pytorch-21.03 container, 1 GPU (docs/references.md, Simulator sources).
const SourceFigure kFigures[] = {
    {"v100-sxm2-16gb", Precision::amp, 1200, "DGX-1 16GB, mixed precision"},
    {"v100-sxm2-16gb", Precision::fp32, 367, "DGX-1 16GB, FP32"},
    {"v100-sxm2-32gb", Precision::amp, 1156, "DGX-1 32GB, mixed precision"},
    {"a100-sxm4-80gb", Precision::amp, 2470, "DGX A100 80GB, mixed precision"},
    // Lambda's deeplearning-benchmark (GitHub: lambdal/deeplearning-benchmark,
    // pytorch/pytorch-train-throughput-fp32.csv, batch per GPU from
    // pytorch/scripts/config_v1/config_pytorch_{80,24}GB.sh): the same PyTorch recipe on synthetic
    // data, "FP32" with PyTorch's default TF32 convolutions on Ampere and later.
    {"h100-sxm5-80gb", Precision::tf32, 1753, "Lambda, H100 80GB SXM5, FP32 (TF32 convolutions)", 640},
    {"geforce-rtx-3090", Precision::tf32, 513, "Lambda, RTX 3090, FP32 (TF32 convolutions)", 224},
    {"geforce-rtx-4090", Precision::tf32, 721, "Lambda, RTX 4090, FP32 (TF32 convolutions)", 224},
};

StepResult one_gpu_step(const Workload& w, const DeviceSpec& d, Precision p, std::size_t batch) {
  StepOptions o;
  o.batch = batch;
  o.precision = p;
  o.optimizer_bytes_per_param = 20;  // SGD with momentum, as the recipe
  return simulate_step(StepInputs{w, d, nullptr, o});
}

double conv_seconds(const Workload& w, const StepResult& r) {
  double t = 0;
  for (std::size_t i = 0; i < w.layers.size(); ++i) {
    if (w.layers[i].kind == LayerKind::conv) t += r.layer_forward_s[i] + r.layer_backward_s[i];
  }
  return t;
}

// The convolution fraction (tensor or compute, whichever precision p uses) with which the step
// model gives `images_per_s`: the convolutions' time is inversely proportional to it where they
// are compute-bound, so a few fixed-point steps converge.
double solve_fraction(const Workload& w, DeviceSpec d, Precision p, double images_per_s, std::size_t batch) {
  Efficiency& e = d.efficiency[static_cast<std::size_t>(LayerKind::conv)];
  double& f = d.on_tensor_cores(p) ? e.tensor : e.compute;
  const double target_s = static_cast<double>(batch) / images_per_s;
  for (int i = 0; i < 50; ++i) {
    const StepResult r = one_gpu_step(w, d, p, batch);
    const double conv = conv_seconds(w, r);
    const double others = r.step_s - conv;
    EXPECT_GT(target_s, others) << "the other layers alone are slower than the figure";
    const double factor = conv / (target_s - others);
    f *= factor;
    if (std::abs(factor - 1) < 1e-9) break;
  }
  return f;
}

TEST(DeviceFractions, EachConvolutionFractionReproducesItsPublishedSingleGpuFigure) {
  const Workload resnet50 = resolve_workload("resnet50");
  for (const SourceFigure& s : kFigures) {
    const DeviceSpec d = resolve_device(s.device);
    const Efficiency& e = d.of(LayerKind::conv);
    const double in_file = d.on_tensor_cores(s.precision) ? e.tensor : e.compute;
    const double solved = solve_fraction(resnet50, d, s.precision, s.images_per_s, s.batch);
    const double predicted = static_cast<double>(s.batch) / one_gpu_step(resnet50, d, s.precision, s.batch).step_s;
    EXPECT_NEAR(predicted, s.images_per_s, 0.01 * s.images_per_s)
        << s.device << " (" << s.where << "): the model gives " << predicted << " img/s with the file's fraction "
        << in_file << "; the figure needs " << solved << " (docs/simulator.md, Achievable fractions)";
  }
}

// The solver itself: a fraction solved for a figure gives that figure back, and halving the
// target rate roughly halves a compute-bound fraction.
TEST(DeviceFractions, TheSolverReproducesAGivenRate) {
  const Workload resnet50 = resolve_workload("resnet50");
  DeviceSpec d = resolve_device("v100-sxm2-16gb");
  const double f = solve_fraction(resnet50, d, Precision::fp32, 300, 256);
  d.efficiency[static_cast<std::size_t>(LayerKind::conv)].compute = f;
  EXPECT_NEAR(256.0 / one_gpu_step(resnet50, d, Precision::fp32, 256).step_s, 300, 0.3);
  const double half = solve_fraction(resnet50, resolve_device("v100-sxm2-16gb"), Precision::fp32, 150, 256);
  EXPECT_LT(half, 0.5 * f);  // the other layers' fixed time makes it a little less than half
  EXPECT_GT(half, 0.3 * f);
}

}  // namespace
}  // namespace scalelab::sim
