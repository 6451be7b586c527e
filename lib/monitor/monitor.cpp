// GpuMonitor (monitor.h): one sampling thread that sleeps on a condition variable until the next
// deadline or stop(), so stopping never waits for an interval to run out.
#include "monitor/monitor.h"

#include <cmath>

#include <fmt/format.h>

#include "core/error.h"
#include "core/timer.h"
#include "monitor/csv.h"

namespace scalelab::monitor {

std::string interval_problem(double s) {
  return fmt::format("{}: give a positive number of seconds, at most {:g} (a day)", s, kMaxIntervalS);
}

GpuMonitor::GpuMonitor(GpuSampler& sampler, std::ostream& csv, MonitorOptions options)
    : sampler_(sampler), csv_(csv), options_(std::move(options)) {
  if (!valid_interval(options_.interval_s)) throw_usage("GPU monitor interval " + interval_problem(options_.interval_s));
}

GpuMonitor::~GpuMonitor() {
  if (started_ && !stopped_) {
    {
      std::lock_guard lock(mutex_);
      stop_requested_ = true;
    }
    wake_.notify_all();
    thread_.join();
  }
}

void GpuMonitor::start() {
  if (started_) throw_runtime("GpuMonitor::start called twice");
  const std::size_t n = sampler_.devices().size();
  sample_.resize(n);
  rows_.reserve(256 * (n + 1));
  timestamp_.reserve(32);
  utilization_sum_.assign(n, 0);
  power_sum_.assign(n, 0);
  max_memory_.assign(n, kNotAvailable);
  total_memory_.assign(n, kNotAvailable);
  utilization_n_.assign(n, 0);
  power_n_.assign(n, 0);
  report_.source = sampler_.description();
  nvlink_start_ = sampler_.nvlink();
  csv_ << csv_header() << '\n' << std::flush;
  if (!csv_) throw_runtime("writing " + options_.output_name + " failed; check the disk and the path");
  start_seconds_ = now_seconds();
  thread_ = std::thread([this] { run(); });
  started_ = true;
}

void GpuMonitor::run() {
  const double interval = options_.interval_s;
  double deadline = start_seconds_;
  std::unique_lock lock(mutex_);
  while (!stop_requested_) {
    lock.unlock();
    try {
      take_sample();
    } catch (const std::exception& e) {
      lock.lock();
      error_ = e.what();
      break;
    }
    lock.lock();
    ++samples_;
    if (options_.count != 0 && samples_ >= options_.count) break;
    deadline += interval;
    const double now = now_seconds();
    if (deadline < now) deadline = now + interval;  // fell a whole interval behind: no burst
    const auto until = std::chrono::steady_clock::time_point(
        std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(deadline)));
    wake_.wait_until(lock, until, [this] { return stop_requested_; });
  }
  finished_ = true;
  lock.unlock();
  wake_.notify_all();
}

void GpuMonitor::take_sample() {
  sampler_.sample(sample_);
  format_nvidia_smi_timestamp(std::chrono::system_clock::now(), timestamp_);
  rows_.clear();
  const auto& devices = sampler_.devices();
  for (std::size_t i = 0; i < devices.size() && i < sample_.size(); ++i) {
    const GpuSample& s = sample_[i];
    append_csv_row(rows_, timestamp_, devices[i], s);
    if (!std::isnan(s.utilization_pct)) {
      utilization_sum_[i] += s.utilization_pct;
      ++utilization_n_[i];
    }
    if (!std::isnan(s.power_w)) {
      power_sum_[i] += s.power_w;
      ++power_n_[i];
    }
    if (!std::isnan(s.memory_used_mib) && !(s.memory_used_mib <= max_memory_[i])) max_memory_[i] = s.memory_used_mib;
    if (!std::isnan(s.memory_total_mib)) total_memory_[i] = s.memory_total_mib;
  }
  csv_.write(rows_.data(), static_cast<std::streamsize>(rows_.size()));
  csv_.flush();  // a reader following the file (tail -f) sees every sample as it is taken
  if (!csv_) throw_runtime("writing " + options_.output_name + " failed; check the disk and the path");
}

bool GpuMonitor::wait_finished(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  return wake_.wait_for(lock, timeout, [this] { return finished_; });
}

std::size_t GpuMonitor::samples() const {
  std::lock_guard lock(mutex_);
  return samples_;
}

MonitorReport GpuMonitor::stop() {
  if (!started_ || stopped_) return report_;
  {
    std::lock_guard lock(mutex_);
    stop_requested_ = true;
  }
  wake_.notify_all();
  thread_.join();
  stopped_ = true;
  report_.seconds = now_seconds() - start_seconds_;
  report_.samples = samples_;
  report_.error = error_;
  const auto& devices = sampler_.devices();
  report_.gpus.clear();
  for (std::size_t i = 0; i < devices.size(); ++i) {
    GpuSummary g;
    g.index = devices[i].index;
    g.name = devices[i].name;
    g.samples = samples_;
    if (utilization_n_[i] > 0) g.mean_utilization_pct = utilization_sum_[i] / static_cast<double>(utilization_n_[i]);
    if (power_n_[i] > 0) g.mean_power_w = power_sum_[i] / static_cast<double>(power_n_[i]);
    g.max_memory_used_mib = max_memory_[i];
    g.memory_total_mib = total_memory_[i];
    report_.gpus.push_back(g);
  }
  try {
    report_.nvlink = nvlink_traffic(nvlink_start_, sampler_.nvlink(), report_.seconds > 0 ? report_.seconds : 1e-9);
  } catch (const std::exception& e) {
    if (report_.error.empty()) report_.error = std::string("reading the NVLink counters at the end: ") + e.what();
  }
  return report_;
}

namespace {

nlohmann::json number_or_null(double v) { return std::isnan(v) ? nlohmann::json(nullptr) : nlohmann::json(v); }

std::string or_na(double v, const char* format) {
  return std::isnan(v) ? std::string("[N/A]") : fmt::format(fmt::runtime(format), v);
}

}  // namespace

void to_json(nlohmann::json& j, const MonitorReport& r) {
  j = nlohmann::json{{"seconds", r.seconds}, {"samples", r.samples}, {"source", r.source}};
  j["gpus"] = nlohmann::json::array();
  for (const auto& g : r.gpus) {
    j["gpus"].push_back({{"index", g.index},
                         {"name", g.name},
                         {"samples", g.samples},
                         {"mean_utilization_pct", number_or_null(g.mean_utilization_pct)},
                         {"max_memory_used_mib", number_or_null(g.max_memory_used_mib)},
                         {"memory_total_mib", number_or_null(g.memory_total_mib)},
                         {"mean_power_w", number_or_null(g.mean_power_w)}});
  }
  j["nvlink"] = r.nvlink;
  j["error"] = r.error.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.error);
}

std::string format_report(const MonitorReport& r) {
  std::string s = fmt::format("GPU monitor: {} samples over {:.1f} s ({})\n", r.samples, r.seconds, r.source);
  for (const auto& g : r.gpus) {
    s += fmt::format("  GPU {} ({}): mean utilization {}, peak memory {} of {}, mean power {}\n", g.index, g.name,
                     or_na(g.mean_utilization_pct, "{:.1f} %"), or_na(g.max_memory_used_mib, "{:.0f} MiB"),
                     or_na(g.memory_total_mib, "{:.0f} MiB"), or_na(g.mean_power_w, "{:.1f} W"));
  }
  if (!r.nvlink.empty()) s += format_nvlink_traffic(r.nvlink, r.seconds);
  if (!r.error.empty()) s += "GPU monitor stopped early: " + r.error + "\n";
  return s;
}

}  // namespace scalelab::monitor
