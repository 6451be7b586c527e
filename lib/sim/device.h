// A compute device as the step simulator sees it (a roofline): peak FLOP/s per precision, memory
// bandwidth and capacity, and per layer kind the achievable fraction of each, so that a layer's
// time is the larger of FLOPs / (peak x compute fraction) and bytes / (bandwidth x memory
// fraction). The catalog (data/devices/*.json, docs/simulator.md) holds the course's GPUs from
// their datasheets; "this machine's" CPU comes from calibration (the nn engine's own kernels
// measured per layer kind, sim/cpu_rates.h).
//
//   DeviceSpec v100 = resolve_device("v100-sxm2-16gb");
//   double t = v100.layer_seconds(LayerKind::conv, flops, bytes, Precision::amp);
#pragma once
#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "sim/workload.h"

namespace scalelab::sim {

// fp32: float32 throughout; tf32: float32 storage, TF32 tensor-core products (Ampere and later);
// amp: float16/bfloat16 compute on tensor cores with float32 master weights.
enum class Precision { fp32, tf32, amp };
[[nodiscard]] std::string_view name_of(Precision p);
[[nodiscard]] Precision parse_precision(std::string_view text);  // usage error about "precision"
// Bytes of one activation element in this precision (4, 4, 2).
[[nodiscard]] double activation_bytes(Precision p);

inline constexpr std::size_t kLayerKinds = 7;  // the LayerKind values, in declaration order

// What fraction of the peak a layer kind reaches: compute (of the FP32 peak, on the CUDA cores),
// memory (of the bandwidth) and tensor (of the TF32 and FP16/BF16 tensor peaks, on the tensor
// cores: a different unit, reached at a different fraction). Each documented with its source in the
// device file.
struct Efficiency {
  double compute = 0.5;
  double memory = 0.7;
  double tensor = 0.5;
};

// One matrix product shape measured on this machine's CPU and the rate it reached (sim/cpu_rates.h).
struct ShapeRate {
  LayerKind kind = LayerKind::conv;
  GemmShape shape;
  double flops_per_s = 0;
};

// One memory-bound layer measured on this machine's CPU: the bytes one pass moves and the rate.
struct TrafficRate {
  LayerKind kind = LayerKind::elementwise;
  double bytes = 0;
  double bytes_per_s = 0;
};

// A run of layers the nn engine fuses into one unit on this machine's CPU (nn::Model::fused_groups:
// a convolution computing its pool, or the first convolution, chunk by chunk in cache), timed as
// it runs in training: the layers it covers (kind and figures, as workload_from_model gives them;
// names are not compared) and forward + backward seconds per sample at `batch` samples per call.
struct FusedRate {
  std::vector<WorkloadLayer> layers;
  double batch = 0;
  double seconds_per_sample = 0;
};

struct DeviceSpec {
  std::string name;          // "v100-sxm2-16gb"
  std::string title;         // "NVIDIA V100 SXM2 16 GB"
  std::string kind = "gpu";  // "gpu" or "cpu"
  double fp32_tflops = 0;    // peak, dense
  double tf32_tflops = 0;    // 0: no TF32 tensor cores (then tf32 runs at the fp32 peak)
  double amp_tflops = 0;     // FP16/BF16 tensor (dense); 0: none (then amp runs at the fp32 peak)
  double mem_bw_GBps = 0;
  double memory_GiB = 0;
  std::array<Efficiency, kLayerKinds> efficiency{};  // indexed by LayerKind
  // This machine's CPU: the products measured shape by shape. A layer of a kind measured so is
  // priced at the rate of the measured shape nearest to its own (log m, n, k), in place of its
  // kind's fraction. Empty for the catalog's GPUs and for profiles made before they were measured.
  std::vector<ShapeRate> shape_rates;
  // This machine's CPU: memory-bound layers measured at several sizes. A layer of a kind measured
  // so moves its bytes at the rate interpolated (log-log) at its own bytes, clamped to the ends,
  // in place of bandwidth x its kind's fraction: in the caches or from memory, as its size says.
  std::vector<TrafficRate> traffic_rates;
  // This machine's CPU: runs of layers the engine fuses, timed as a unit. A workload whose layers
  // from some index on are such a run (same kinds and figures) prices them at the run's time.
  std::vector<FusedRate> fused_rates;
  std::vector<std::string> sources;

  [[nodiscard]] double peak_flops(Precision p) const;  // FLOP/s
  // Whether precision p runs on the tensor peak (tf32 or amp where the device has one).
  [[nodiscard]] bool on_tensor_cores(Precision p) const;
  [[nodiscard]] const Efficiency& of(LayerKind k) const { return efficiency[static_cast<std::size_t>(k)]; }
  // Seconds for `flops` FLOPs moving `bytes` bytes on a layer of kind `k`: the roofline.
  // `shape`, when given, selects a measured shape's rate (shape_rates) for the compute side.
  [[nodiscard]] double layer_seconds(LayerKind k, double flops, double bytes, Precision p,
                                     const std::optional<GemmShape>& shape = std::nullopt) const;
  // Bytes/s for `bytes` moved by one pass of a kind-k layer: traffic_rates where that kind was
  // measured, else the bandwidth times the kind's memory fraction.
  [[nodiscard]] double memory_Bps(LayerKind k, double bytes) const;
  // The measured shape of kind k nearest to `shape` (log m, n, k), or nullptr when none of that
  // kind was measured.
  [[nodiscard]] const ShapeRate* nearest_shape(LayerKind k, const GemmShape& shape) const;
  // FLOP/s of a kind-k product of `shape`: the nearest measured shape's rate; where that shape was
  // measured at several batches, interpolated (log-log) at shape.batch, clamped to the ends. 0
  // when no shape of that kind was measured.
  [[nodiscard]] double shape_flops_per_s(LayerKind k, const GemmShape& shape) const;
  // Whether layers[first...] begin with a measured fused run: its length (0: none) and, through
  // `seconds_per_sample`, its forward + backward time per sample at `batch` (log-log between the
  // batches it was timed at, flat beyond them). Only at first == 0: the runs are timed as a
  // model's first layers, which compute no input gradient.
  [[nodiscard]] std::size_t fused_run_at(const std::vector<WorkloadLayer>& layers, std::size_t first, double batch,
                                         double& seconds_per_sample) const;
};

// Names of the catalog's devices (data/devices, embedded at build time), sorted.
[[nodiscard]] std::vector<std::string> device_names();
// A catalog name or a device file; unknown names and malformed files are input errors naming them.
[[nodiscard]] DeviceSpec resolve_device(const std::string& name_or_path);
// The catalog device that a machine file's GPU model string names ("Tesla V100-SXM2-32GB" ->
// v100-sxm2-32gb), or an input error naming the model and the catalog's devices; `where` (the
// machine and the GPU: "pcie.json, GPU gpu0"), when given, opens the error, which then names
// --machine.
[[nodiscard]] DeviceSpec device_for_model(const std::string& gpu_model, const std::string& where = "");
[[nodiscard]] DeviceSpec device_from_json(const nlohmann::json& j, const std::string& where);

}  // namespace scalelab::sim
