// The benchmark's buffers in node memory (shared_arena.h).
#include "bench/shared_arena.h"

#include <algorithm>

#include "bench/sweep.h"
#include "core/error.h"

namespace scalelab::bench {
namespace {

constexpr std::size_t kAlign = 64;
// Whole lines, and at least one byte more than asked, as Buffer's own allocations.
std::size_t rounded(std::size_t b) { return (b + kAlign) / kAlign * kAlign; }

}  // namespace

std::size_t SharedArena::bytes_for(const BenchOptions& o, int nranks) {
  std::size_t most = 0;
  for (const comm::DataType t : o.types) {
    const std::size_t es = comm::size_of(t);
    const auto sizes = size_sweep(o.sweep, es);
    if (sizes.empty()) continue;
    const CaseShape s = case_shape(o.collective, sizes.back(), es, nranks);
    const std::size_t send = s.send_elems * es, out = std::max(s.send_elems, s.recv_elems) * es;
    most = std::max(most, rounded(send) + 2 * rounded(out));
  }
  return most + kAlign;
}

SharedArena::SharedArena(comm::Communicator& comm, std::size_t bytes) : bytes_(bytes) {
  base_ = comm.shared_buffer(bytes);
  if (base_ == nullptr) {
    throw_parameter(ErrorKind::usage, "shared_buffers",
                    "backend " + comm.backend() + " has no memory shared between ranks; run without shared buffers");
  }
}

Buffer SharedArena::take(std::size_t bytes) {
  if (next_ + rounded(bytes) > bytes_) {
    throw_runtime("bench: a case needs more than the " + std::to_string(bytes_) + " bytes of its shared buffer");
  }
  Buffer b(base_ + next_, bytes);
  next_ += rounded(bytes);
  return b;
}

}  // namespace scalelab::bench
