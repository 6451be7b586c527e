// Ring allgather: p-1 steps around the ring r -> r+1; at step s rank r forwards block (r - s)
// (its own at step 0) and receives block (r - s - 1) straight into place. Each rank sends and
// receives (p-1)/p of the result: the bandwidth lower bound. No scratch.
#include "collectives/algorithm_base.h"
#include "collectives/cost_formulas.h"

namespace scalelab::collectives {
namespace {

class RingAllgather final : public PointToPointAlgorithm {
 public:
  RingAllgather() : PointToPointAlgorithm("ring", Collective::allgather) {}

 private:
  void exchange(comm::Communicator& comm, const void* send, void* recv, std::size_t count, comm::DataType type,
                comm::ReduceOp /*op*/, int /*root*/) override {
    const int p = comm.size(), r = comm.rank();
    const std::size_t bytes = count * comm::size_of(type);
    comm.local_copy(at(recv, static_cast<std::size_t>(r), bytes), send, bytes);  // no-op in place
    const int right = mod(r + 1, p), left = mod(r - 1, p);
    for (int s = 0; s < p - 1; ++s) {
      const auto sb = static_cast<std::size_t>(mod(r - s, p)), rb = static_cast<std::size_t>(mod(r - s - 1, p));
      comm.sendrecv(at(recv, sb, bytes), bytes, right, at(recv, rb, bytes), bytes, left, tag::allgather_ring);
    }
  }
};

}  // namespace

double ring_allgather(double n, int p, const Costs& c) {
  if (p < 2 || n <= 0) return 0.0;
  return (p - 1) * c.message(n / p);
}

namespace {
double cost(double n, int p, const Costs& c) { return ring_allgather(n, p, c); }
std::unique_ptr<Algorithm> make() { return std::make_unique<RingAllgather>(); }
}  // namespace

extern const AlgorithmDescriptor kAllgatherRing{
    Collective::allgather, "ring", "p-1 steps around the ring, each forwarding one block",
    "NCCL's Ring allgather; Open MPI's ring allgather", NcclAnalogue::ring, &make, &cost, 0, 0};

}  // namespace scalelab::collectives
