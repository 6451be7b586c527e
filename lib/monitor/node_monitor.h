// NodeMonitor: `scalelab train --gpu-monitor FILE.csv [--gpu-monitor-interval S]`. One rank per
// node (the launcher's local rank 0) samples that node's GPUs while training runs; the others
// only check, like it, that NVML is usable, so without it every rank stops with the same line
// before training (and MPI) starts.
//
//   monitor::NodeMonitor gpu_monitor({path, interval});  // before MPI: opens NVML and the CSV
//   gpu_monitor.start();
//   trainer.run();
//   doc["gpu_monitor"] = gpu_monitor.finish();            // prints the report, returns its JSON
//
// With an empty path it does nothing (finish() returns null). The destructor stops sampling if
// finish() was not reached (training threw). On a job spanning several nodes each node writes
// its own file: FILE.csv becomes FILE-<hostname>.csv.
#pragma once
#include <fstream>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "monitor/monitor.h"

namespace scalelab::monitor {

struct NodeMonitorOptions {
  std::string csv_path;   // empty: no monitoring
  double interval_s = 5;
};

// FILE.csv -> FILE-host.csv (or FILE-host when there is no extension).
[[nodiscard]] std::string per_node_path(const std::string& path, const std::string& host);

class NodeMonitor {
 public:
  explicit NodeMonitor(const NodeMonitorOptions& options);
  ~NodeMonitor();
  NodeMonitor(const NodeMonitor&) = delete;
  NodeMonitor& operator=(const NodeMonitor&) = delete;

  void start();
  nlohmann::json finish();
  // True on the rank that samples.
  [[nodiscard]] bool sampling() const { return monitor_ != nullptr; }

 private:
  std::unique_ptr<GpuSampler> sampler_;
  std::ofstream file_;
  std::unique_ptr<GpuMonitor> monitor_;
  std::string path_;
  double interval_s_ = 0;
};

}  // namespace scalelab::monitor
