// Pipelined-chain ("ring") broadcast: root -> root+1 -> ... -> root-1, the buffer cut into
// segments so every link of the chain is busy at once. For large buffers the time approaches
// n / B plus (p-2) segment times, independent of p: why NCCL broadcasts along rings.
#include "collectives/algorithm_base.h"

namespace scalelab::collectives {
namespace {

constexpr std::size_t kSegmentBytes = 256 * 1024;

class RingBroadcast final : public PointToPointAlgorithm {
 public:
  RingBroadcast() : PointToPointAlgorithm("ring", Collective::broadcast) {}

 private:
  void exchange(comm::Communicator& comm, const void* send, void* recv, std::size_t count, comm::DataType type,
                comm::ReduceOp /*op*/, int root) override {
    const int p = comm.size(), r = comm.rank();
    const std::size_t es = comm::size_of(type);
    if (r == root) comm.local_copy(recv, send, count * es);
    const int v = mod(r - root, p);
    const int prev = mod(r - 1, p), next = mod(r + 1, p);
    const bool has_next = v + 1 < p;
    const std::size_t seg = std::max<std::size_t>(1, kSegmentBytes / es);
    for (std::size_t off = 0; off < count; off += seg) {
      const std::size_t n = std::min(seg, count - off);
      if (v > 0) comm.recv(at(recv, off, es), n * es, prev, tag::bcast_ring);
      if (has_next) comm.send(at(recv, off, es), n * es, next, tag::bcast_ring);
    }
  }
};

}  // namespace

std::unique_ptr<Algorithm> make_broadcast_ring() { return std::make_unique<RingBroadcast>(); }

}  // namespace scalelab::collectives
