// Recursive-doubling allreduce: log2(p) rounds; in round k each rank swaps its whole partial
// result with the rank whose (renumbered) index differs in bit k, and both combine. Few
// messages (good for small buffers), but every round moves the whole buffer: lg p * n bytes.
// Non-powers of two fold the extra ranks in first and hand them the result at the end (Fold).
#include "collectives/algorithm_base.h"
#include "collectives/cost_formulas.h"
#include "collectives/cost_parts.h"

namespace scalelab::collectives {
namespace {

class RecursiveDoublingAllreduce final : public PointToPointAlgorithm {
 public:
  RecursiveDoublingAllreduce() : PointToPointAlgorithm("recursive_doubling", Collective::allreduce) {}

 private:
  void exchange(comm::Communicator& comm, const void* send, void* recv, std::size_t count, comm::DataType type,
                comm::ReduceOp op, int /*root*/) override {
    const int p = comm.size(), r = comm.rank();
    const std::size_t es = comm::size_of(type), bytes = count * es;
    const Fold fold(r, p);
    unsigned char* tmp = scratch_.get(bytes);
    const void* partial = send;  // our current partial result
    if (fold.sits_out()) {
      comm.send(send, bytes, r + 1, tag::recursive_doubling);
    } else if (fold.has_partner(r)) {
      comm.recv(tmp, bytes, r - 1, tag::recursive_doubling);
      comm::reduce_to(recv, send, tmp, count, type, op);
      partial = recv;
    }
    if (!fold.sits_out()) {
      for (int mask = 1; mask < fold.pof2; mask <<= 1) {
        const int partner = fold.real(fold.newrank ^ mask);
        comm.sendrecv(partial, bytes, partner, tmp, bytes, partner, tag::recursive_doubling);
        comm::reduce_to(recv, partial, tmp, count, type, op);
        partial = recv;
      }
      comm::finish_reduction(recv, count, type, op, p);
    }
    if (fold.sits_out()) {
      comm.recv(recv, bytes, r + 1, tag::recursive_doubling);
    } else if (fold.has_partner(r)) {
      comm.send(recv, bytes, r - 1, tag::recursive_doubling);
    }
  }
};

}  // namespace

double recursive_doubling_allreduce(double n, int p, const Costs& c) {
  if (p < 2 || n <= 0) return 0.0;
  const int k = cost_parts::floor_log2(p);
  // From the second round on each rank sends its output, so every round reduces into lines a
  // peer has read (the measured step); with one round the peer reads only the input.
  double t = k == 1 && (1 << k) == p ? c.message(n) + c.reduce(n) : k * c.exchange_reduce(n);
  // Ranks beyond the largest power of two fold their data in first and get the result last.
  if ((1 << k) != p) t += c.exchange_reduce(n) + c.message(n);
  return t;
}

namespace {
double cost(double n, int p, const Costs& c) { return recursive_doubling_allreduce(n, p, c); }
std::unique_ptr<Algorithm> make() { return std::make_unique<RecursiveDoublingAllreduce>(); }
}  // namespace

extern const AlgorithmDescriptor kAllreduceRecursiveDoubling{
    Collective::allreduce, "recursive_doubling", "log2(p) rounds, each swapping the whole buffer with a partner",
    "Open MPI's recursive doubling (coll/tuned algorithm 3), its choice for small buffers", NcclAnalogue::none,
    &make, &cost, 0, 0};

}  // namespace scalelab::collectives
