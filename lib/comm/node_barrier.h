// A barrier among the ranks of one node through flags in their shared memory (node_memory.h): each
// rank owns a counter in the first cache line of its region at `offset`, raises it by one on
// arrival (a release store) and waits until every peer's counter has come as far (acquire loads).
// No message and no system call: the round costs about one cache-line transfer between cores.
// What the shared-memory allreduce synchronises with, and what `scalelab calibrate` times for the
// cost model's Costs::sync.
//
//   NodeBarrier barrier(*comm.node_memory(4096));
//   ... write my region ...; barrier.arrive_and_wait(); ... read the peers' regions ...
//
// Waiting spins (the peer is usually a few hundred nanoseconds away) for up to 10 ms, as MPI's own
// progress loop would: yielding early hands the core to any other runnable process for a whole
// time slice (4 ms here), and under a compiler's load made half the calls last that long. Only
// when the job's ranks on this host outnumber its online CPUs, and the peer may be waiting for
// this very core, does it yield after a few microseconds. After the spin it alternates yields and 50 us naps, and
// every so often asks the node memory whether the peer can still arrive (NodeMemory::check_peer),
// so a failed peer under the local backend is an error, not a hang. Every rank of the node must
// make the same calls.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>

#include "comm/node_memory.h"

namespace scalelab::comm {

class NodeBarrier {
 public:
  // The flag is the 8 bytes at region(l) + offset (8-byte aligned, zero at the start), for every l.
  explicit NodeBarrier(const NodeMemory& mem, std::size_t offset = 0);
  // Raises this rank's flag and returns once every peer of the node has raised theirs as far.
  void arrive_and_wait();
  [[nodiscard]] std::uint64_t steps() const { return steps_; }

 private:
  [[nodiscard]] std::atomic<std::uint64_t>& flag(int local) const;
  void wait_for(int local) const;

  const NodeMemory& mem_;
  std::size_t offset_;
  bool oversubscribed_;  // more ranks on the host than online CPUs
  std::uint64_t steps_ = 0;
};

}  // namespace scalelab::comm
