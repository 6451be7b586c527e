// bench -R 1: the benchmark's buffers in node memory. One shared buffer
// (Communicator::shared_buffer) is made once for the largest case of the run; each case takes its
// input and its outputs (at most two alive at once) from it, on 64-byte boundaries. The algorithms
// that work through node memory (shm) then read the peers' buffers in place, as NCCL does with
// buffers nccl-tests -R registers.
//
//   SharedArena arena(comm, SharedArena::bytes_for(options, comm.size()));   // collective
//   arena.reset(); Buffer send = arena.take(bytes);
#pragma once
#include <cstddef>

#include "bench/buffer.h"
#include "bench/options.h"
#include "comm/communicator.h"

namespace scalelab::bench {

class SharedArena {
 public:
  // What the largest case of `options` at `nranks` ranks takes: its input and two outputs.
  [[nodiscard]] static std::size_t bytes_for(const BenchOptions& options, int nranks);
  // Collective; a usage error where the backend has no node memory (nccl).
  SharedArena(comm::Communicator& comm, std::size_t bytes);

  void reset() { next_ = 0; }  // a new case: its buffers start again at the beginning
  [[nodiscard]] Buffer take(std::size_t bytes);

 private:
  unsigned char* base_ = nullptr;
  std::size_t bytes_;
  std::size_t next_ = 0;
};

}  // namespace scalelab::bench
