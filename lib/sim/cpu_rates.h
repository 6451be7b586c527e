// "This machine" for the step simulator: the nn engine's own layers timed on one thread, per layer
// kind, so that a simulated `scalelab train` on this CPU prices each layer at the rate the real
// kernels reach here (nn's BLAS as configured: OpenBLAS or Eigen, nn/blas.h).
//   - conv: nn::Conv2D forward + backward at the cnn model's two convolutions (1->32 and 32->64
//     channels, 3x3, on 28x28 and 26x26 images; the first without input gradient, as in training);
//   - matmul: nn::Dense forward + backward at the cnn model's 9216->128 and 128->10;
//   - elementwise: nn::ReLU and nn::Dropout; pool: nn::MaxPool2D(2) on 64x24x24.
// Compute-bound kinds in FLOP/s (nn::Layer::flops), memory-bound kinds in bytes/s counting each
// layer's input and output once forward and once backward (2 x (in + out) x 4 bytes per image).
// Kinds the cnn model lacks: norm is nn::BatchNorm timed at the lab models' batch norms; attention
// borrows the matmul's rate (the same sgemm) and embedding the elementwise one.
// Besides these per-kind rates, every convolution and dense layer of the lab models (cnn, mlp,
// resnet, trivial) is timed alone at its own shape (convolutions at 1 and 4 times the batch,
// dense layers at 1, 4 and 16 times it), as DeviceSpec::shape_rates: a product's rate depends on
// its shape (here the resnet's 16- and 32-channel convolutions reach about half the cnn's
// 64-channel one, and a dense layer gains a third from batch 32 to 128) and, less, on how many
// images a call holds, so the simulator prices each layer at the nearest measured shape, at its
// batch.
// Likewise every elementwise, pooling and batch-norm layer of the lab models is timed alone at a
// quarter of the batch to 16 times it (DeviceSpec::traffic_rates): in the caches such a layer
// moves its bytes several times faster than from memory, so the simulator reads each layer's rate
// off its kind's table at the bytes one pass of it moves.
// And the runs of layers the engine fuses into one unit in training (nn::Model::fused_groups: the
// cnn's first convolution computed chunk by chunk inside the second, which computes its max-pool
// while its output is in cache) are timed as a unit, at 1 and 4 times the batch, as
// DeviceSpec::fused_rates: timed apart, the same layers take about 10% longer, their outputs going
// to memory and back.
// `scalelab calibrate` stores the figures in its profile (model::ComputeRates, plain numbers);
// device_from_profile turns them back into a DeviceSpec of kind "cpu".
//
//   CpuRates r = measure_cpu_rates({.quick = true});
//   DeviceSpec cpu = cpu_device(r);  // or device_from_profile(load_profile(path), path)
#pragma once
#include <array>
#include <string>
#include <vector>

#include "model/profile.h"
#include "sim/device.h"

namespace scalelab::sim {

// True for the kinds whose rate is in FLOP/s (conv, matmul, attention); the others' is in bytes/s.
[[nodiscard]] bool compute_bound(LayerKind k);

struct CpuRates {
  std::array<double, kLayerKinds> rate{};      // per LayerKind: FLOP/s or bytes/s (compute_bound)
  std::array<bool, kLayerKinds> measured{};    // false: borrowed from a measured kind (see above)
  std::vector<ShapeRate> shapes;               // the lab models' products, shape by shape (below)
  std::vector<TrafficRate> traffic;            // their memory-bound layers, at several batches (below)
  std::vector<FusedRate> fused;                // the runs of their layers the engine fuses (below)
  std::string blas;                            // nn::blas_description()
  int threads = 1;
  int batch = 0;
};

struct CpuRateOptions {
  bool quick = false;  // fewer repetitions (tests, calibrate --quick)
  int repeats = 0;     // timings per figure (their median); 0: 3 when quick, else 9
  int batch = 32;      // images per timed call
};

// Times the layers on one compute thread (restoring the thread count afterwards); medians over
// repetitions after one warm-up call. Allocates its layers and buffers once, before timing.
[[nodiscard]] CpuRates measure_cpu_rates(const CpuRateOptions& options);

// Between the simulator's per-kind rates and the profile's plain numbers.
[[nodiscard]] model::ComputeRates to_compute_rates(const CpuRates& r);
[[nodiscard]] CpuRates cpu_rates_from(const model::ComputeRates& c);

// A device of kind "cpu" whose peaks are the measured rates: fp32 peak the fastest compute-bound
// rate, bandwidth the fastest memory-bound one, each kind's fraction its own rate over that peak
// (1 for the fastest), the other side's fraction 1; memory the host's. No TF32 or AMP: those run at the
// fp32 peak.
[[nodiscard]] DeviceSpec cpu_device(const CpuRates& r, const std::string& title = "this machine's CPU, one thread");

// "This machine" from a calibration profile's compute section; a profile without one is an input
// error naming `origin` and saying to run `scalelab calibrate`.
// shared: the rates measured with every rank computing at once (Profile::compute_shared), where
// the profile has them; else the rates of one rank alone.
[[nodiscard]] DeviceSpec device_from_profile(const model::Profile& p, const std::string& origin, bool shared = false);

}  // namespace scalelab::sim
