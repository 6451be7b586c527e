// GPU samples as CSV in the shape `nvidia-smi --query-gpu=timestamp,index,name,utilization.gpu,
// memory.used,memory.total,power.draw,temperature.gpu --format=csv` prints: a header naming each
// query with its unit in brackets, then one row per GPU per sample, fields separated by ", ",
// values with their unit ("42 %", "1024 MiB", "70.25 W"), "[N/A]" where the GPU does not report
// a quantity, and nvidia-smi's local-time timestamp "2026/11/22 08:15:02.123".
// Columns are documented in docs/results-schema.md ("GPU monitor CSV").
#pragma once
#include <chrono>
#include <string>

#include "monitor/sampler.h"

namespace scalelab::monitor {

// The header line, without the newline.
[[nodiscard]] std::string csv_header();

// nvidia-smi's timestamp of `t` in local time: "YYYY/MM/DD HH:MM:SS.mmm". The second form
// overwrites `out` (no allocation once it holds 23 characters).
[[nodiscard]] std::string nvidia_smi_timestamp(std::chrono::system_clock::time_point t);
void format_nvidia_smi_timestamp(std::chrono::system_clock::time_point t, std::string& out);

// Appends one row (and its newline) for `sample` of `device` taken at `timestamp` to `out`;
// no allocation once `out` has the capacity.
void append_csv_row(std::string& out, const std::string& timestamp, const GpuDevice& device, const GpuSample& sample);

}  // namespace scalelab::monitor
