// The machine-derived bounds of core/limits.h.
#include "core/limits.h"

#include <algorithm>
#include <string>
#include <thread>

namespace scalelab::limits {

int hardware_threads() { return std::max(1, static_cast<int>(std::thread::hardware_concurrency())); }

int max_threads() { return std::max(kMinMachineBound, kThreadsPerHardwareThread * hardware_threads()); }

std::string machine_bound_basis(int per_hardware_thread) {
  return "the larger of " + std::to_string(kMinMachineBound) + " and " + std::to_string(per_hardware_thread) +
         " per hardware thread, " + std::to_string(hardware_threads()) + " here";
}

int max_local_ranks() { return std::max(kMinMachineBound, kRanksPerHardwareThread * hardware_threads()); }

}  // namespace scalelab::limits
