// Wall-clock time for measurements: a monotonic clock in seconds, and a stopwatch.
#pragma once
#include <chrono>

#include "core/units.h"

namespace scalelab {

// Seconds since an arbitrary fixed point (steady clock). Differences are meaningful.
[[nodiscard]] inline double now_seconds() {
  using clock = std::chrono::steady_clock;
  return std::chrono::duration<double>(clock::now().time_since_epoch()).count();
}

class Stopwatch {
 public:
  Stopwatch() : start_(now_seconds()) {}
  void restart() { start_ = now_seconds(); }
  [[nodiscard]] Seconds elapsed() const { return Seconds{now_seconds() - start_}; }

 private:
  double start_;
};

}  // namespace scalelab
