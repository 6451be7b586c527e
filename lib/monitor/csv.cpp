// nvidia-smi-shaped CSV rows (csv.h).
#include "monitor/csv.h"

#include <cmath>
#include <ctime>

#include <fmt/format.h>

namespace scalelab::monitor {
namespace {

// A value with nvidia-smi's unit suffix, or "[N/A]".
void append_value(std::string& out, double v, const char* format) {
  out += ", ";
  if (std::isnan(v)) {
    out += "[N/A]";
  } else {
    fmt::format_to(std::back_inserter(out), fmt::runtime(format), v);
  }
}

}  // namespace

std::string csv_header() {
  return "timestamp, index, name, utilization.gpu [%], memory.used [MiB], memory.total [MiB], power.draw [W], "
         "temperature.gpu";
}

void format_nvidia_smi_timestamp(std::chrono::system_clock::time_point t, std::string& out) {
  const std::time_t seconds = std::chrono::system_clock::to_time_t(t);
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count() % 1000;
  std::tm local{};
  localtime_r(&seconds, &local);
  char buf[32];
  const std::size_t n = std::strftime(buf, sizeof buf, "%Y/%m/%d %H:%M:%S", &local);
  out.assign(buf, n);
  fmt::format_to(std::back_inserter(out), ".{:03}", ms < 0 ? ms + 1000 : ms);
}

std::string nvidia_smi_timestamp(std::chrono::system_clock::time_point t) {
  std::string s;
  format_nvidia_smi_timestamp(t, s);
  return s;
}

void append_csv_row(std::string& out, const std::string& timestamp, const GpuDevice& device, const GpuSample& sample) {
  out += timestamp;
  fmt::format_to(std::back_inserter(out), ", {}, {}", device.index, device.name);
  // nvidia-smi prints whole percent and MiB, watts with two decimals, whole degrees.
  append_value(out, sample.utilization_pct, "{:.0f} %");
  append_value(out, sample.memory_used_mib, "{:.0f} MiB");
  append_value(out, sample.memory_total_mib, "{:.0f} MiB");
  append_value(out, sample.power_w, "{:.2f} W");
  append_value(out, sample.temperature_c, "{:.0f}");
  out += '\n';
}

}  // namespace scalelab::monitor
