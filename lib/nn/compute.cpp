// The process-wide compute thread count (see compute.h).
#include "nn/compute.h"

#include <atomic>
#include <string>

#include "core/error.h"
#include "nn/blas.h"

namespace scalelab::nn {
namespace {
std::atomic<int> g_threads{0};  // 0: not set yet, treated as 1 (one rank per core is the default)
}

void set_compute_threads(int n) {
  if (n < 1) throw_usage("--threads " + std::to_string(n) + ": the thread count must be at least 1");
  g_threads = n;
  blas_set_threads(n);
}

int compute_threads() {
  int n = g_threads.load();
  if (n == 0) {
    set_compute_threads(1);
    return 1;
  }
  return n;
}

}  // namespace scalelab::nn
