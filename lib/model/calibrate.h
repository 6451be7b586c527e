// Measuring this machine for the cost model (`scalelab calibrate`): run on 2 ranks, both ranks
// measure at once (as they work at once inside a collective) and the slower rank's time counts.
//   - point-to-point: one exchange (Communicator::sendrecv) of m bytes, 8 B .. 64 MiB;
//   - local reduction out = a + b (comm::reduce_to, float32) and memory copy;
//     each with buffers reused ("hot") and walking through a region larger than the last-level
//     cache ("cold");
//   - how cold a working set is: a 256 KiB exchange walking through W bytes per rank, for W from
//     512 KiB to 4x the last-level cache, at most 1 GiB (which part of the caches the two ranks
//     really get);
//   - a copy of what the other rank has just written in node shared memory, both ranks at once,
//     4 KiB to half the largest size (the crossing between the cores that bounds every allreduce);
//   - first touch of fresh pages, and the allocator: from which size a malloc'ed temporary
//     comes back as fresh pages every time (glibc's mmap threshold), and what that costs per byte.
// The result is a model::Profile (model/profile.h).
#pragma once
#include <functional>
#include <string>

#include "comm/communicator.h"
#include "model/profile.h"

namespace scalelab::model {

struct CalibrateOptions {
  bool quick = false;                      // fewer sizes and repetitions (tests, CI)
  std::function<void(const std::string&)> progress;  // called on rank 0 with one line per measurement
  std::function<void()> beat;              // called on every rank after each measurement (a stall watchdog's beat)
};

[[nodiscard]] Profile calibrate(comm::Communicator& comm, const CalibrateOptions& options);

// Seconds per round of comm::NodeBarrier among the ranks (median over timed batches of rounds):
// what the profile keeps as `shm_sync_s`, and how far apart the cores are for cache-line traffic.
// 0 when the ranks are not all on one node. Collective.
[[nodiscard]] double measure_flag_round(comm::Communicator& comm, bool quick);

}  // namespace scalelab::model
