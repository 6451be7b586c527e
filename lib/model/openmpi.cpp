// Open MPI 4.1 allreduce decision and costs (see openmpi.h and docs/cost-model.md).
#include "model/openmpi.h"

#include "collectives/cost_formulas.h"
#include "collectives/cost_parts.h"

namespace scalelab::model {

using namespace collectives;  // the cost formulas

OmpiAllreduce openmpi_allreduce_choice(double b, int p) {
  using A = OmpiAllreduce;
  // ompi/mca/coll/tuned/coll_tuned_decision_fixed.c (v4.1), commutative branch.
  if (p < 4) {
    if (b < 8) return A::ring;
    if (b < 4096) return A::recursive_doubling;
    if (b < 8192) return A::ring;
    if (b < 16384) return A::recursive_doubling;
    if (b < 65536) return A::ring;
    if (b < 262144) return A::segmented_ring;
    return A::rabenseifner;
  }
  if (p < 8) return b < 16 ? A::ring : b < 8192 ? A::recursive_doubling : A::rabenseifner;
  if (p < 16) return b < 8192 ? A::recursive_doubling : A::rabenseifner;
  if (p < 32) return b < 64 ? A::segmented_ring : b < 4096 ? A::recursive_doubling : A::rabenseifner;
  if (p < 64) return b < 128 ? A::segmented_ring : A::rabenseifner;
  if (p < 128) return b < 262144 ? A::recursive_doubling : A::rabenseifner;
  return b < 131072 ? A::nonoverlapping : A::rabenseifner;
}

std::string name_of(OmpiAllreduce a) {
  switch (a) {
    case OmpiAllreduce::basic_linear: return "basic_linear";
    case OmpiAllreduce::nonoverlapping: return "nonoverlapping";
    case OmpiAllreduce::recursive_doubling: return "recursive_doubling";
    case OmpiAllreduce::ring: return "ring";
    case OmpiAllreduce::segmented_ring: return "segmented_ring";
    case OmpiAllreduce::rabenseifner: return "rabenseifner";
  }
  return "?";
}

double openmpi_allreduce(double n, int p, const Costs& costs, bool in_place) {
  if (p < 2 || n <= 0) return in_place ? 0.0 : costs.copy(n);
  // Out of place every algorithm first copies the input into the output, and in place the
  // caller has just written it there: either way the reduce-scatter steps reduce into lines this
  // rank's core holds (collectives::OwnedOutput). But the ring and Rabenseifner send from the
  // output, so their peers hold what they read of it: the allgather's messages land on blocks a
  // peer read in the reduce-scatter, and the next call's copy-in lands on what its allgather
  // sent (`held` bytes). Each pays for taking those lines back (Costs::reclaim), as far as the
  // peer still holds them: between its read and the write it works through about the call's own
  // n bytes (the rest of its steps, or its own copy-in), which is `since` below.
  const collectives::OwnedOutput c(costs);
  const double since = n;
  auto copy_in = [&](double held) { return in_place ? 0.0 : c.copy(n) + c.reclaim(held, since); };
  switch (openmpi_allreduce_choice(n, p)) {
    case OmpiAllreduce::recursive_doubling:
      // One temporary of n bytes, filled by every step.
      return copy_in(0) + c.fresh(n, n) + recursive_doubling_allreduce(n, p, c);
    case OmpiAllreduce::ring:
    case OmpiAllreduce::segmented_ring: {
      // Two receive buffers of one block each (one when p == 2); segmented ring with the
      // default segment size 0 falls back to the plain ring. Its allgather sends p - 1 blocks
      // and receives p - 1 into blocks the reduce-scatter sent.
      const double block = n / p;
      const double bufs = p > 2 ? 2.0 : 1.0;
      return copy_in(n - block) + bufs * c.fresh(block, block) + ring_allreduce(n, p, c) + (p - 1) * c.reclaim(block, since);
    }
    case OmpiAllreduce::rabenseifner: {
      // A temporary of n bytes; the halving steps write n/2 + n/4 + ... of it. Each doubling
      // step receives into the half its halving mirror sent; the ranges it sends nest, the
      // last one n/2.
      double back = 0;
      for (int s = 1; s <= collectives::cost_parts::floor_log2(p); ++s) back += c.reclaim(n / (1 << s), since);
      return copy_in(n / 2) + c.fresh(n, n * (p - 1) / p) + rabenseifner_allreduce(n, p, c) + back;
    }
    case OmpiAllreduce::nonoverlapping:
    case OmpiAllreduce::basic_linear:
      return copy_in(0) + tree_allreduce(n, p, c);
  }
  return 0.0;
}

double openmpi_collective(Collective c, double n, int p, const Costs& costs, bool in_place, std::string& detail) {
  switch (c) {
    case Collective::allreduce:
      detail = "Open MPI " + name_of(openmpi_allreduce_choice(n, p));
      return openmpi_allreduce(n, p, costs, in_place);
    case Collective::broadcast:
      detail = "Open MPI (modelled as a binomial tree)";
      return binomial_broadcast(n, p, costs);
    case Collective::allgather:
      detail = "Open MPI (modelled as a ring)";
      return ring_allgather(n, p, costs);
    case Collective::reduce_scatter:
      // Open MPI reduces into a temporary copy of the input: lines this rank's core holds.
      detail = "Open MPI (modelled as a ring)";
      return ring_reduce_scatter(n, p, collectives::OwnedOutput(costs));
  }
  return 0.0;
}

}  // namespace scalelab::model
