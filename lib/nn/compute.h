// Compute threads for the nn engine: how many threads the BLAS products and the engine's own
// loops may use in this process. The trainer's --threads calls set_compute_threads once at start.
// parallel_for splits work over those threads (a persistent pool: no thread is created, and
// nothing is allocated, per call); with one thread it is a plain call.
#pragma once
#include <cstddef>

namespace scalelab::nn {

// n >= 1; throws usage otherwise. Applies to OpenBLAS (when loaded) and to the engine's loops.
void set_compute_threads(int n);
[[nodiscard]] int compute_threads();

// Runs fn(begin, end, worker) over [0, n) split into at most compute_threads() contiguous ranges,
// worker in [0, compute_threads()), the calling thread taking worker 0; returns when all are done.
// BLAS calls made inside fn run single-threaded (the parallelism is here, not inside them).
template <class F>
void parallel_for(std::size_t n, F&& fn);

namespace detail {
using RangeFn = void (*)(void* ctx, std::size_t begin, std::size_t end, std::size_t worker);
void run_parallel(std::size_t n, RangeFn fn, void* ctx);
}  // namespace detail

template <class F>
void parallel_for(std::size_t n, F&& fn) {
  if (compute_threads() == 1 || n <= 1) {
    fn(std::size_t{0}, n, std::size_t{0});
    return;
  }
  auto call = [](void* ctx, std::size_t b, std::size_t e, std::size_t w) { (*static_cast<F*>(ctx))(b, e, w); };
  detail::run_parallel(n, call, &fn);
}

}  // namespace scalelab::nn
