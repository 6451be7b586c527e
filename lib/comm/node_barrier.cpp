// NodeBarrier (comm/node_barrier.h).
#include "comm/node_barrier.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <thread>

#include "core/error.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace scalelab::comm {
namespace {

static_assert(std::atomic<std::uint64_t>::is_always_lock_free, "flags in shared memory need lock-free atomics");

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#endif
}

}  // namespace

NodeBarrier::NodeBarrier(const NodeMemory& mem, std::size_t offset)
    : mem_(mem), offset_(offset), oversubscribed_(mem.host_ranks() > std::max(1L, sysconf(_SC_NPROCESSORS_ONLN))) {
  if (offset % alignof(std::atomic<std::uint64_t>) != 0 || offset + 8 > mem.region_bytes()) {
    throw_runtime("NodeBarrier: flag offset " + std::to_string(offset) + " is not 8-byte aligned inside a region of " +
                  std::to_string(mem.region_bytes()) + " bytes");
  }
}

std::atomic<std::uint64_t>& NodeBarrier::flag(int local) const {
  return *reinterpret_cast<std::atomic<std::uint64_t>*>(mem_.region(local) + offset_);
}

void NodeBarrier::arrive_and_wait() {
  ++steps_;
  const int me = mem_.local_rank();
  flag(me).store(steps_, std::memory_order_release);
  for (int l = 0; l < mem_.local_size(); ++l) {
    if (l != me) wait_for(l);
  }
}

void NodeBarrier::wait_for(int local) const {
  const std::atomic<std::uint64_t>& f = flag(local);
  if (f.load(std::memory_order_acquire) >= steps_) return;
  // Spin while the peer is probably running: a few microseconds when ranks share cores (the
  // peer may be waiting for this very core), else up to kSpin. Then yield, then nap.
  using Clock = std::chrono::steady_clock;
  constexpr auto kSpin = std::chrono::milliseconds(10);
  const auto start = Clock::now();
  bool spinning = true;
  for (std::uint32_t i = 0; f.load(std::memory_order_acquire) < steps_; ++i) {
    if (spinning) {
      cpu_relax();
      if (i % 256 == 255) spinning = oversubscribed_ ? i < 2048 : Clock::now() - start < kSpin;
    } else if (i % 16384 < 8192) {
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
    if (i % 1024 == 1023) {
      try {
        mem_.check_peer(local);
      } catch (...) {
        // The peer may have arrived, and returned, between the load above and the check: what it
        // stored before returning is visible once its return is.
        if (f.load(std::memory_order_acquire) >= steps_) return;
        throw;
      }
    }
  }
}

}  // namespace scalelab::comm
