// Rabenseifner's allreduce: a reduce-scatter by recursive halving, then an allgather by
// recursive doubling. Like the ring it moves 2 (p-1)/p of the buffer per rank, but in 2 log2(p)
// rounds instead of 2 (p-1): the algorithm MPI libraries pick for large buffers.
//
//   halving, round with bit m (m = pof2/2 .. 1): keep the lower half of the current block range
//   if our bit m is clear (the upper half otherwise), send the other half to the partner (bit m
//   flipped) and combine what it sends for ours. At the end new rank v owns block v.
//   doubling, m = 1 .. pof2/2: swap owned ranges with the partner; each round doubles them.
// Non-powers of two fold the extra ranks in first (Fold).
#include "collectives/algorithm_base.h"
#include "collectives/cost_formulas.h"
#include "collectives/cost_parts.h"

namespace scalelab::collectives {
namespace {

class RabenseifnerAllreduce final : public PointToPointAlgorithm {
 public:
  RabenseifnerAllreduce() : PointToPointAlgorithm("rabenseifner", Collective::allreduce) {}

 private:
  void exchange(comm::Communicator& comm, const void* send, void* recv, std::size_t count, comm::DataType type,
                comm::ReduceOp op, int /*root*/) override {
    const int p = comm.size(), r = comm.rank();
    const std::size_t es = comm::size_of(type), bytes = count * es;
    const Fold fold(r, p);
    const void* partial = send;
    if (fold.sits_out()) {
      comm.send(send, bytes, r + 1, tag::rabenseifner);
    } else {
      const Blocks blocks{count, static_cast<std::size_t>(fold.pof2)};
      // The fold needs a whole buffer; the halving at most half a buffer rounded up.
      unsigned char* tmp = scratch_.get(fold.has_partner(r) ? bytes : (blocks.offset(fold.pof2 / 2) + 1) * es);
      if (fold.has_partner(r)) {
        comm.recv(tmp, bytes, r - 1, tag::rabenseifner);
        comm::reduce_to(recv, send, tmp, count, type, op);
        partial = recv;
      }
      const auto v = static_cast<std::size_t>(fold.newrank);
      std::size_t lo = 0, hi = static_cast<std::size_t>(fold.pof2);  // our block range
      for (int mask = fold.pof2 / 2; mask >= 1; mask >>= 1) {
        const int partner = fold.real(fold.newrank ^ mask);
        const std::size_t mid = (lo + hi) / 2;
        const bool upper = (v & static_cast<std::size_t>(mask)) != 0;
        const std::size_t keep_lo = upper ? mid : lo, keep_hi = upper ? hi : mid;
        const std::size_t give_lo = upper ? lo : mid, give_hi = upper ? mid : hi;
        const std::size_t keep_off = blocks.offset(keep_lo), keep_n = blocks.offset(keep_hi) - keep_off;
        const std::size_t give_off = blocks.offset(give_lo), give_n = blocks.offset(give_hi) - give_off;
        comm.sendrecv(at(partial, give_off, es), give_n * es, partner, tmp, keep_n * es, partner, tag::rabenseifner);
        comm::reduce_to(at(recv, keep_off, es), at(partial, keep_off, es), tmp, keep_n, type, op);
        partial = recv;  // every later range lies inside this kept one
        lo = keep_lo;
        hi = keep_hi;
      }
      comm::finish_reduction(at(recv, blocks.offset(v), es), blocks.size(v), type, op, p);
      for (int mask = 1; mask < fold.pof2; mask <<= 1) {
        const int partner = fold.real(fold.newrank ^ mask);
        const std::size_t width = hi - lo;
        const bool upper = (v & static_cast<std::size_t>(mask)) != 0;
        const std::size_t other_lo = upper ? lo - width : hi, other_hi = other_lo + width;
        const std::size_t mine_off = blocks.offset(lo), other_off = blocks.offset(other_lo);
        comm.sendrecv(at(recv, mine_off, es), (blocks.offset(hi) - mine_off) * es, partner, at(recv, other_off, es),
                      (blocks.offset(other_hi) - other_off) * es, partner, tag::rabenseifner);
        lo = std::min(lo, other_lo);
        hi = std::max(hi, other_hi);
      }
    }
    if (fold.sits_out()) {
      comm.recv(recv, bytes, r + 1, tag::rabenseifner);
    } else if (fold.has_partner(r)) {
      comm.send(recv, bytes, r - 1, tag::rabenseifner);
    }
  }
};

}  // namespace

double rabenseifner_allreduce(double n, int p, const Costs& c) {
  if (p < 2 || n <= 0) return 0.0;
  const int k = cost_parts::floor_log2(p);
  double t = 0;
  double m = n;
  for (int s = 0; s < k; ++s) {
    m /= 2;
    t += c.exchange_reduce(m) + c.message(m);  // halving step, and its doubling mirror
  }
  if ((1 << k) != p) t += c.exchange_reduce(n) + c.message(n);
  return t;
}

namespace {
double cost(double n, int p, const Costs& c) { return rabenseifner_allreduce(n, p, c); }
std::unique_ptr<Algorithm> make() { return std::make_unique<RabenseifnerAllreduce>(); }
}  // namespace

extern const AlgorithmDescriptor kAllreduceRabenseifner{
    Collective::allreduce, "rabenseifner",
    "reduce-scatter by recursive halving, allgather by recursive doubling: 2 log2(p) rounds",
    "Open MPI's Rabenseifner (coll/tuned algorithm 6), its choice for large buffers", NcclAnalogue::none, &make,
    &cost, 0, 0};

}  // namespace scalelab::collectives
