// GpuMonitor: samples a GpuSampler on its own thread every interval and writes nvidia-smi-shaped
// CSV (csv.h) to a stream, as `nvidia-smi --query-gpu=... --format=csv -l 5` does beside a
// training job; reads the NVLink counters when it starts and when it stops (nvlink.h).
//
//   GpuMonitor m(sampler, file, {.interval_s = 5});
//   m.start();                       // header, NVLink counters, first sample at once
//   ... train ...
//   MonitorReport r = m.stop();      // wakes the thread at once, joins it, NVLink deltas
//
// Samples are taken at start + k x interval (later, never earlier, when the machine is busy).
// A failure of the sampler or of the stream ends sampling and is returned in the report; the
// destructor stops a monitor still running. Buffers are allocated once, at start().
#pragma once
#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <ostream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "monitor/nvlink.h"
#include "monitor/sampler.h"

namespace scalelab::monitor {

// The longest interval between samples: a day. Longer ones would overflow the clock's deadline
// arithmetic (nanoseconds in 64 bits) and sample as fast as the GPU answers.
inline constexpr double kMaxIntervalS = 86400;
// Whether `s` seconds is an interval the monitor takes: above 0, finite, at most kMaxIntervalS.
[[nodiscard]] inline bool valid_interval(double s) { return s > 0 && s <= kMaxIntervalS; }
// What to say of an interval that is not: "10000000000: give a positive number of seconds, at most 86400 (a day)".
[[nodiscard]] std::string interval_problem(double s);

struct MonitorOptions {
  double interval_s = 5;     // between samples; valid_interval
  std::size_t count = 0;     // stop sampling after this many samples (0: until stop())
  std::string output_name;   // the CSV's name, for error messages
};

// What one GPU did over the run (NaN where the GPU reported nothing).
struct GpuSummary {
  unsigned index = 0;
  std::string name;
  std::size_t samples = 0;
  double mean_utilization_pct = kNotAvailable;
  double max_memory_used_mib = kNotAvailable;
  double memory_total_mib = kNotAvailable;
  double mean_power_w = kNotAvailable;
};

struct MonitorReport {
  double seconds = 0;        // from start() to stop()
  std::size_t samples = 0;   // sampling rounds (each one row per GPU)
  std::string source;        // the sampler's description
  std::vector<GpuSummary> gpus;
  std::vector<NvLinkTraffic> nvlink;
  std::string error;         // why sampling ended early; empty when it did not
};

void to_json(nlohmann::json& j, const MonitorReport& r);
// The report as lines: per-GPU means, then the NVLink traffic.
[[nodiscard]] std::string format_report(const MonitorReport& r);

class GpuMonitor {
 public:
  GpuMonitor(GpuSampler& sampler, std::ostream& csv, MonitorOptions options);
  ~GpuMonitor();
  GpuMonitor(const GpuMonitor&) = delete;
  GpuMonitor& operator=(const GpuMonitor&) = delete;

  // Writes the header, reads the NVLink counters and starts sampling. Throws a usage error for
  // an interval that is not positive, a runtime error when called twice.
  void start();
  // Ends sampling (waking the thread at once), reads the NVLink counters again and reports.
  // Calling it again returns the same report.
  MonitorReport stop();
  // Waits up to `timeout` for sampling to end by itself (count reached or an error); true if it has.
  bool wait_finished(std::chrono::milliseconds timeout);
  // Sampling rounds so far.
  [[nodiscard]] std::size_t samples() const;

 private:
  void run();
  void take_sample();

  GpuSampler& sampler_;
  std::ostream& csv_;
  MonitorOptions options_;
  std::thread thread_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_requested_ = false;
  bool finished_ = false;
  bool started_ = false;
  bool stopped_ = false;
  std::size_t samples_ = 0;
  std::string error_;
  double start_seconds_ = 0;
  std::vector<NvLinkReading> nvlink_start_;
  // Reused by every sample.
  std::vector<GpuSample> sample_;
  std::string rows_;
  std::string timestamp_;
  std::vector<double> utilization_sum_, power_sum_, max_memory_, total_memory_;
  std::vector<std::size_t> utilization_n_, power_n_;
  MonitorReport report_;
};

}  // namespace scalelab::monitor
