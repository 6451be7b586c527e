// The process-wide compute thread count and the worker pool behind parallel_for (see compute.h).
#include "nn/compute.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/error.h"
#include "nn/blas.h"

namespace scalelab::nn {
namespace {

std::atomic<int> g_threads{0};  // 0: not set yet, treated as 1 (one rank per core is the default)

// Workers 1..n-1 wait for a job (a generation counter), run their range, and count down.
class Pool {
 public:
  ~Pool() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
      ++generation_;
    }
    wake_.notify_all();
    for (auto& t : workers_) t.join();
  }
  void ensure(std::size_t n) {
    while (workers_.size() + 1 < n) {
      std::size_t id = workers_.size() + 1;
      workers_.emplace_back([this, id] { loop(id); });
    }
  }
  void run(std::size_t n, detail::RangeFn fn, void* ctx, std::size_t parts) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      fn_ = fn;
      ctx_ = ctx;
      n_ = n;
      parts_ = parts;
      pending_ = parts - 1;
      ++generation_;
    }
    wake_.notify_all();
    fn(ctx, 0, range_end(0), 0);
    std::unique_lock<std::mutex> lock(mu_);
    done_.wait(lock, [this] { return pending_ == 0; });
  }

 private:
  [[nodiscard]] std::size_t range_end(std::size_t w) const { return n_ * (w + 1) / parts_; }
  void loop(std::size_t id) {
    std::uint64_t seen = 0;
    for (;;) {
      std::unique_lock<std::mutex> lock(mu_);
      wake_.wait(lock, [&] { return generation_ != seen; });
      seen = generation_;
      if (stop_) return;
      if (id >= parts_) continue;
      const std::size_t b = n_ * id / parts_, e = range_end(id);
      lock.unlock();
      fn_(ctx_, b, e, id);
      lock.lock();
      if (--pending_ == 0) done_.notify_one();
    }
  }
  std::vector<std::thread> workers_;
  std::mutex mu_;
  std::condition_variable wake_, done_;
  std::uint64_t generation_ = 0;
  bool stop_ = false;
  detail::RangeFn fn_ = nullptr;
  void* ctx_ = nullptr;
  std::size_t n_ = 0, parts_ = 1, pending_ = 0;
};

Pool& pool() {
  static Pool p;
  return p;
}

}  // namespace

void set_compute_threads(int n) {
  if (n < 1) throw_parameter(ErrorKind::usage, "threads", std::to_string(n) + ": the thread count must be at least 1");
  // The local backend's ranks are threads of one process and each rank's Trainer sets the count:
  // Eigen's and the BLAS's settings are plain globals, so they are written one at a time, and not
  // again when the count is already the one asked for (another rank may be multiplying by then).
  static std::mutex mu;
  const std::lock_guard<std::mutex> lock(mu);
  if (g_threads.load() == n) return;
  g_threads = n;
  blas_set_threads(n);
  pool().ensure(static_cast<std::size_t>(n));
}

int compute_threads() {
  int n = g_threads.load();
  if (n == 0) {
    set_compute_threads(1);
    return 1;
  }
  return n;
}

namespace detail {

void run_parallel(std::size_t n, RangeFn fn, void* ctx) {
  const auto threads = static_cast<std::size_t>(compute_threads());
  const std::size_t parts = std::min(threads, n);
  // The BLAS runs single-threaded inside the parallel region: the threads are ours here.
  blas_set_threads(1);
  pool().run(n, fn, ctx, parts);
  blas_set_threads(static_cast<int>(threads));
}

}  // namespace detail
}  // namespace scalelab::nn
