// NodeMonitor (node_monitor.h): which rank samples, its CSV file, and the report at the end.
#include "monitor/node_monitor.h"

#include <unistd.h>

#include <cmath>
#include <iostream>

#include <fmt/format.h>

#include "core/error.h"
#include "core/launch_env.h"
#include "monitor/nvml_sampler.h"

namespace scalelab::monitor {

std::string per_node_path(const std::string& path, const std::string& host) {
  const auto slash = path.find_last_of('/');
  const auto dot = path.find_last_of('.');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash) || dot == slash + 1 || dot == 0) {
    return path + "-" + host;
  }
  return path.substr(0, dot) + "-" + host + path.substr(dot);
}

NodeMonitor::NodeMonitor(const NodeMonitorOptions& options) {
  if (options.csv_path.empty()) return;
  if (!valid_interval(options.interval_s)) {
    throw_parameter(ErrorKind::usage, "interval_s", interval_problem(options.interval_s));
  }
  auto sampler = open_nvml_sampler();  // every rank: without NVML all stop here, with one line
  const LaunchEnv env = read_launch_env();
  if (env.local_rank != 0) return;  // this node's local rank 0 samples
  path_ = options.csv_path;
  if (env.local_size < env.size) {
    char host[256] = {};
    gethostname(host, sizeof host - 1);
    path_ = per_node_path(path_, host);
  }
  file_.open(path_, std::ios::out | std::ios::trunc);
  if (!file_) throw_parameter(ErrorKind::input, "csv_path", path_ + ": cannot write the file; check that its folder exists");
  sampler_ = std::move(sampler);
  MonitorOptions mo;
  mo.interval_s = options.interval_s;
  interval_s_ = options.interval_s;
  mo.output_name = path_;
  monitor_ = std::make_unique<GpuMonitor>(*sampler_, file_, mo);
}

NodeMonitor::~NodeMonitor() = default;  // GpuMonitor's destructor stops a running monitor

void NodeMonitor::start() {
  if (!monitor_) return;
  std::cout << fmt::format("GPU monitor: sampling {} GPU(s) every {} s to {} ({})\n", sampler_->devices().size(),
                           interval_s_, path_, sampler_->description())
            << std::flush;
  monitor_->start();
}

nlohmann::json NodeMonitor::finish() {
  if (!monitor_) return nullptr;
  const MonitorReport report = monitor_->stop();
  std::cout << format_report(report) << std::flush;
  nlohmann::json j = report;
  j["csv"] = path_;
  return j;
}

}  // namespace scalelab::monitor
