// A monitoring session as `scalelab monitor` runs it: sample until interrupted (SIGINT, SIGTERM),
// until --count samples, or while a child command runs (`scalelab monitor -- mpirun ... train`,
// like `nvidia-smi -l` beside a training job). The child gets the default signal handling; a
// SIGINT or SIGTERM sent to this process alone is passed on to it, and the session ends when it
// exits.
#pragma once
#include <ostream>
#include <string>
#include <vector>

#include "monitor/monitor.h"

namespace scalelab::monitor {

struct SessionOptions {
  MonitorOptions monitor;
  std::vector<std::string> command;  // empty: no child
};

struct SessionResult {
  MonitorReport report;
  int exit_code = 0;  // the child's exit status (128 + signal if a signal ended it); 0 without child
  bool interrupted = false;  // ended by SIGINT/SIGTERM (without a child)
};

// Runs the session on the calling thread. Throws scalelab::Error (runtime) when the child cannot
// be started (the monitor is stopped first).
SessionResult run_session(GpuSampler& sampler, std::ostream& csv, const SessionOptions& options);

}  // namespace scalelab::monitor
