// The phases a run tells its stall watchdog of (comm/watchdog.h, StallWatchdog::beat), in one
// list: the watchdog's messages name them, and SCALELAB_FAULT_AT (comm/fault_injection.h) accepts
// exactly these.
#pragma once
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

#include "core/text.h"

namespace scalelab::comm {

inline constexpr std::string_view kPhases[] = {
    // scalelab train
    "broadcast", "start barrier", "compute", "allreduce", "metrics", "evaluation", "checkpoint", "epoch end",
    // scalelab bench (a collective's own name, and what surrounds each call)
    "allgather", "reduce-scatter", "barrier", "result exchange",
    // scalelab calibrate
    "calibration",
};

[[nodiscard]] inline bool known_phase(std::string_view phase) {
  for (std::string_view p : kPhases) {
    if (p == phase) return true;
  }
  return false;
}

// "broadcast, start barrier, ..." for messages.
[[nodiscard]] inline std::string phase_list() {
  return join_list(std::vector<std::string>(std::begin(kPhases), std::end(kPhases)));
}

}  // namespace scalelab::comm
