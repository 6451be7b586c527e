// Recursive-doubling allgather: log2(p) rounds; in round k each rank swaps everything it has
// gathered so far with the rank whose (renumbered) index differs in bit k, so the gathered range
// doubles each round. Non-powers of two fold first (Fold): the even rank of each pair hands its
// block to the odd one, so new rank v holds the contiguous blocks [first(v), first(v+1)) with
// first(v) = 2v below rem and v + rem above; at the end the odd rank hands the whole result back.
#include "collectives/algorithm_base.h"
#include "collectives/cost_formulas.h"

namespace scalelab::collectives {
namespace {

class RecursiveDoublingAllgather final : public PointToPointAlgorithm {
 public:
  RecursiveDoublingAllgather() : PointToPointAlgorithm("recursive_doubling", Collective::allgather) {}

 private:
  void exchange(comm::Communicator& comm, const void* send, void* recv, std::size_t count, comm::DataType type,
                comm::ReduceOp /*op*/, int /*root*/) override {
    const int p = comm.size(), r = comm.rank();
    const std::size_t bytes = count * comm::size_of(type);
    const auto block = [&](int b) { return at(recv, static_cast<std::size_t>(b), bytes); };
    comm.local_copy(block(r), send, bytes);  // no-op in place
    const Fold fold(r, p);
    const auto first = [&](int v) { return v < fold.rem ? 2 * v : v + fold.rem; };  // first(pof2) == p
    if (fold.sits_out()) {
      comm.send(block(r), bytes, r + 1, tag::allgather_rd);
    } else {
      if (fold.has_partner(r)) comm.recv(block(r - 1), bytes, r - 1, tag::allgather_rd);
      int lo = fold.newrank, hi = fold.newrank + 1;  // gathered range, in new ranks
      for (int mask = 1; mask < fold.pof2; mask <<= 1) {
        const int partner = fold.real(fold.newrank ^ mask);
        const int width = hi - lo;
        const int other_lo = (fold.newrank & mask) ? lo - width : hi, other_hi = other_lo + width;
        const auto n_mine = static_cast<std::size_t>(first(hi) - first(lo));
        const auto n_other = static_cast<std::size_t>(first(other_hi) - first(other_lo));
        comm.sendrecv(block(first(lo)), n_mine * bytes, partner, block(first(other_lo)), n_other * bytes, partner,
                      tag::allgather_rd);
        lo = std::min(lo, other_lo);
        hi = std::max(hi, other_hi);
      }
    }
    const std::size_t total = static_cast<std::size_t>(p) * bytes;
    if (fold.sits_out()) {
      comm.recv(recv, total, r + 1, tag::allgather_rd);
    } else if (fold.has_partner(r)) {
      comm.send(recv, total, r - 1, tag::allgather_rd);
    }
  }
};

}  // namespace

double recursive_doubling_allgather(double n, int p, const Costs& c) {
  if (p < 2 || n <= 0) return 0.0;
  double t = 0;
  double m = n / p;
  for (int s = 1; s < p; s *= 2, m *= 2) t += c.message(m);
  return t;
}

namespace {
double cost(double n, int p, const Costs& c) { return recursive_doubling_allgather(n, p, c); }
std::unique_ptr<Algorithm> make() { return std::make_unique<RecursiveDoublingAllgather>(); }
}  // namespace

extern const AlgorithmDescriptor kAllgatherRecursiveDoubling{
    Collective::allgather, "recursive_doubling", "log2(p) rounds, each swapping everything gathered so far",
    "Open MPI's recursive doubling allgather", NcclAnalogue::none, &make, &cost, 0, 0};

}  // namespace scalelab::collectives
