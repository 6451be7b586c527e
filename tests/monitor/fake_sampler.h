// A scripted GpuSampler for the monitor tests: `gpus` devices; call k (from 0) reports GPU i at
// utilization 10 k + i %, memory used 100 (k + 1) MiB of 1000 MiB, power 50 + k W, temperature
// 30 + i C (GPU 1 reports no power, as some boards do); NVLink reading r (from 0) gives GPU 0's
// links 0 and 1 tx = (r + 1) x link_step_bytes and rx = twice that, and GPU 1 no NVLink. It
// records the steady-clock time of every sample() call and can be told to fail at a given call.
#pragma once
#include <mutex>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/timer.h"
#include "monitor/sampler.h"

namespace scalelab::monitor::testing {

class FakeSampler final : public GpuSampler {
 public:
  explicit FakeSampler(unsigned gpus, std::uint64_t link_step_bytes = 3'000'000'000ULL)
      : link_step_bytes_(link_step_bytes) {
    for (unsigned i = 0; i < gpus; ++i) devices_.push_back({i, "Fake GPU " + std::to_string(i)});
  }
  const std::vector<GpuDevice>& devices() const override { return devices_; }
  void sample(std::vector<GpuSample>& out) override {
    std::lock_guard lock(mutex_);
    const auto k = static_cast<unsigned>(times_.size());
    times_.push_back(now_seconds());
    if (fail_at_ >= 0 && static_cast<long>(k) == fail_at_) throw_runtime("GPU 0 fell off the bus (scripted)");
    out.resize(devices_.size());
    for (unsigned i = 0; i < devices_.size(); ++i) {
      out[i] = GpuSample{};
      out[i].index = i;
      out[i].utilization_pct = 10.0 * k + i;
      out[i].memory_used_mib = 100.0 * (k + 1);
      out[i].memory_total_mib = 1000;
      out[i].power_w = i == 1 ? kNotAvailable : 50.0 + k;
      out[i].temperature_c = 30.0 + i;
    }
  }
  std::vector<NvLinkReading> nvlink() override {
    const std::uint64_t r = nvlink_reads_++;
    std::vector<NvLinkReading> readings;
    for (unsigned i = 0; i < devices_.size(); ++i) {
      NvLinkReading reading;
      reading.index = i;
      if (i == 0) {
        reading.exposed = true;
        for (unsigned link = 0; link < 2; ++link) {
          reading.links.push_back({link, (r + 1) * link_step_bytes_, 2 * (r + 1) * link_step_bytes_});
        }
      } else {
        reading.reason = "this GPU has no NVLink";
      }
      readings.push_back(reading);
    }
    return readings;
  }
  std::string description() const override { return "fake sampler (tests)"; }

  void fail_at(long call) { fail_at_ = call; }
  std::vector<double> times() const {
    std::lock_guard lock(mutex_);
    return times_;
  }

 private:
  std::vector<GpuDevice> devices_;
  std::uint64_t link_step_bytes_;
  std::uint64_t nvlink_reads_ = 0;
  long fail_at_ = -1;
  mutable std::mutex mutex_;
  std::vector<double> times_;
};

}  // namespace scalelab::monitor::testing
