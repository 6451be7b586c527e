// StallWatchdog (train/watchdog.h).
#include "train/watchdog.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "core/timer.h"

namespace scalelab::train {

StallWatchdog::StallWatchdog(double timeout_s, int rank) : timeout_s_(timeout_s), rank_(rank), last_beat_s_(now_seconds()) {
  if (timeout_s_ > 0) thread_ = std::thread([this] { watch(); });
}

StallWatchdog::~StallWatchdog() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void StallWatchdog::beat(const char* phase, std::int64_t step) {
  phase_.store(phase, std::memory_order_relaxed);
  step_.store(step, std::memory_order_relaxed);
  last_beat_s_.store(now_seconds(), std::memory_order_relaxed);
}

void StallWatchdog::watch() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!cv_.wait_for(lock, std::chrono::seconds(1), [this] { return stop_; })) {
    const double idle = now_seconds() - last_beat_s_.load(std::memory_order_relaxed);
    if (idle > timeout_s_) {
      std::fprintf(stderr,
                   "error: rank %d: no training progress for %.0f s after '%s' of step %lld: another rank has "
                   "stopped or died; ending this rank (stall timeout)\n",
                   rank_, idle, phase_.load(), static_cast<long long>(step_.load()));
      std::fflush(stderr);
      std::_Exit(1);  // the blocked main thread cannot be unwound; mpirun ends the other ranks
    }
  }
}

}  // namespace scalelab::train
