// Ring reduce-scatter: p-1 steps around the ring r -> r+1. At step s rank r receives a partial
// sum of block (r - s - 2) from its left neighbour, adds its own contribution, and at the next
// step forwards it; at the last step the block is r itself and the sum is complete. Each rank
// sends (p-1)/p of the input: the bandwidth lower bound, and the first half of the ring allreduce.
// Scratch: two blocks (the partial being forwarded and the one arriving).
#include "collectives/algorithm_base.h"
#include "collectives/cost_formulas.h"
#include "collectives/cost_parts.h"

namespace scalelab::collectives {
namespace {

class RingReduceScatter final : public PointToPointAlgorithm {
 public:
  RingReduceScatter() : PointToPointAlgorithm("ring", Collective::reduce_scatter) {}

 private:
  void exchange(comm::Communicator& comm, const void* send, void* recv, std::size_t count, comm::DataType type,
                comm::ReduceOp op, int /*root*/) override {
    const int p = comm.size(), r = comm.rank();
    const std::size_t es = comm::size_of(type), bytes = count * es;
    const auto block = [&](int b) { return at(send, static_cast<std::size_t>(b) * count, es); };
    unsigned char* partial = scratch_.get(bytes);
    unsigned char* incoming = scratch2_.get(bytes);
    const int right = mod(r + 1, p), left = mod(r - 1, p);
    for (int s = 0; s < p - 1; ++s) {
      const void* out = s == 0 ? static_cast<const void*>(block(mod(r - 1, p))) : partial;
      comm.sendrecv(out, bytes, right, incoming, bytes, left, tag::reduce_scatter_ring);
      void* dst = s == p - 2 ? recv : partial;
      comm::reduce_to(dst, block(mod(r - s - 2, p)), incoming, count, type, op);
    }
    comm::finish_reduction(recv, count, type, op, p);
  }
};

}  // namespace

double ring_reduce_scatter(double n, int p, const Costs& c, double segment) {
  if (p < 2 || n <= 0) return 0.0;
  const cost_parts::Cut k = cost_parts::cut(n / p, segment);
  return (p - 1) * k.pieces * c.exchange_reduce(k.piece);
}

namespace {
double cost(double n, int p, const Costs& c) { return ring_reduce_scatter(n, p, c); }
std::unique_ptr<Algorithm> make() { return std::make_unique<RingReduceScatter>(); }
}  // namespace

extern const AlgorithmDescriptor kReduceScatterRing{
    Collective::reduce_scatter, "ring", "p-1 steps around the ring, each adding one block and passing it on",
    "NCCL's Ring reduce-scatter; the first half of the ring allreduce", NcclAnalogue::ring, &make, &cost, 0, 0};

}  // namespace scalelab::collectives
