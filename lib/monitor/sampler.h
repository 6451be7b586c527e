// The GPU sampler interface behind `scalelab monitor` and `train --gpu-monitor`: the devices of
// this node and one reading of each (what `nvidia-smi --query-gpu=...` reports), plus the NVLink
// throughput counters. NvmlSampler (nvml_sampler.h) reads the driver through NVML; tests use a
// scripted sampler. GpuMonitor (monitor.h) calls sample() on its own thread at an interval.
#pragma once
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace scalelab::monitor {

// A quantity the device does not report (nvidia-smi prints "[N/A]").
inline constexpr double kNotAvailable = std::numeric_limits<double>::quiet_NaN();

struct GpuDevice {
  unsigned index = 0;  // NVML's index, as nvidia-smi's `index` column
  std::string name;    // "NVIDIA H100 80GB HBM3"
};

// One reading of one GPU. A field the device does not report is kNotAvailable.
struct GpuSample {
  unsigned index = 0;
  double utilization_pct = kNotAvailable;   // utilization.gpu: time a kernel ran, last sample period
  double memory_used_mib = kNotAvailable;   // memory.used (MiB = 2^20 bytes, as nvidia-smi)
  double memory_total_mib = kNotAvailable;  // memory.total
  double power_w = kNotAvailable;           // power.draw
  double temperature_c = kNotAvailable;     // temperature.gpu
};

// One NVLink's cumulative data-payload counters (bytes since the driver loaded).
struct NvLinkCounter {
  unsigned link = 0;
  std::uint64_t tx_bytes = 0;
  std::uint64_t rx_bytes = 0;
};

// A GPU's NVLink counters at one instant, or why there are none ("not exposed: ...").
struct NvLinkReading {
  unsigned index = 0;
  bool exposed = false;
  std::string reason;                 // when !exposed: what the driver said
  std::vector<NvLinkCounter> links;   // active links only
};

class GpuSampler {
 public:
  virtual ~GpuSampler() = default;
  // The GPUs of this node, in index order; fixed for the sampler's life.
  [[nodiscard]] virtual const std::vector<GpuDevice>& devices() const = 0;
  // Fills `out` (resized to devices().size(), storage reused) with one reading per GPU. Throws
  // scalelab::Error (runtime) when the driver fails.
  virtual void sample(std::vector<GpuSample>& out) = 0;
  // The NVLink counters of every GPU (one reading per device, in index order).
  [[nodiscard]] virtual std::vector<NvLinkReading> nvlink() = 0;
  // Where the readings come from, e.g. "NVML 12.590 (driver 590.44)".
  [[nodiscard]] virtual std::string description() const = 0;
};

}  // namespace scalelab::monitor
