// The machine-derived bounds of core/limits.h.
#include "core/limits.h"

#include <algorithm>
#include <fstream>
#include <string>
#include <thread>

namespace scalelab::limits {

int hardware_threads() { return std::max(1, static_cast<int>(std::thread::hardware_concurrency())); }

int max_threads() { return std::max(kMinMachineBound, kThreadsPerHardwareThread * hardware_threads()); }

std::string machine_bound_basis(int per_hardware_thread) {
  return "the larger of " + std::to_string(kMinMachineBound) + " and " + std::to_string(per_hardware_thread) +
         " per hardware thread, " + std::to_string(hardware_threads()) + " here";
}

std::uint64_t available_memory_bytes() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  std::uint64_t kib = 0;
  std::string unit;
  while (in >> key >> kib >> unit) {
    if (key == "MemAvailable:") return kib * 1024;
  }
  return 0;
}

int max_local_ranks() { return std::max(kMinMachineBound, kRanksPerHardwareThread * hardware_threads()); }

}  // namespace scalelab::limits
