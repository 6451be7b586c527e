// Pipelined-chain ("ring") broadcast: root -> root+1 -> ... -> root-1, the buffer cut into
// segments so every link of the chain is busy at once. For large buffers the time approaches
// n / B plus (p-2) segment times, independent of p: why NCCL broadcasts along rings.
#include "collectives/algorithm_base.h"
#include "collectives/cost_formulas.h"
#include "collectives/cost_parts.h"

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

double ring_broadcast(double n, int p, const Costs& c, double segment) {
  if (p < 2 || n <= 0) return 0.0;
  // A pipeline along the ring: the first piece takes p-1 hops, then one piece per hop time.
  const cost_parts::Cut k = cost_parts::cut(n, segment);
  return (p - 2 + k.pieces) * c.message(k.piece);
}

namespace {
double cost(double n, int p, const Costs& c) { return ring_broadcast(n, p, c, static_cast<double>(kSegmentBytes)); }
std::unique_ptr<Algorithm> make() { return std::make_unique<RingBroadcast>(); }
}  // namespace

extern const AlgorithmDescriptor kBroadcastRing{
    Collective::broadcast, "ring", "a pipelined chain from the root: every link busy at once",
    "NCCL's Ring broadcast", NcclAnalogue::ring, &make, &cost, kSegmentBytes, 0};

}  // namespace scalelab::collectives
