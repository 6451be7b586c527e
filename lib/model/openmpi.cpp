// Open MPI 4.1 allreduce decision and costs (see openmpi.h and docs/cost-model.md).
#include "model/openmpi.h"

#include "collectives/cost_formulas.h"

namespace scalelab::model {

using namespace collectives;  // the cost formulas

namespace {

// Open MPI's algorithms, out of place, first copy the input into the output, and then reduce
// into lines the copy has just taken for this rank's core; the measured reduce-scatter step
// (Costs::exchange_reduce) writes an output the peer still holds, as a collective that reduces
// straight into its output finds it. So after the copy a step is priced as its parts: an
// exchange (of data just written) and a reduction.
class OutputOwned final : public Costs {
 public:
  explicit OutputOwned(const Costs& c) : c_(c) {}
  [[nodiscard]] double message(double m) const override { return c_.message(m); }
  [[nodiscard]] double reduce(double m) const override { return c_.reduce(m); }
  [[nodiscard]] double copy(double m) const override { return c_.copy(m); }
  [[nodiscard]] double exchange_reduce(double m) const override { return c_.message(m) + c_.reduce(m); }
  [[nodiscard]] double fresh(double a, double t) const override { return c_.fresh(a, t); }
  [[nodiscard]] double sync() const override { return c_.sync(); }
  [[nodiscard]] double peer_copy(double m) const override { return c_.peer_copy(m); }
  [[nodiscard]] double staged(double m) const override { return c_.staged(m); }

 private:
  const Costs& c_;
};

}  // namespace

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
  const OutputOwned owned(costs);
  const Costs& c = in_place ? costs : owned;
  const double copy_in = in_place ? 0.0 : c.copy(n);  // every algorithm starts rbuf = sbuf
  switch (openmpi_allreduce_choice(n, p)) {
    case OmpiAllreduce::recursive_doubling:
      // One temporary of n bytes, filled by every step.
      return copy_in + c.fresh(n, n) + recursive_doubling_allreduce(n, p, c);
    case OmpiAllreduce::ring:
    case OmpiAllreduce::segmented_ring: {
      // Two receive buffers of one block each (one when p == 2); segmented ring with the
      // default segment size 0 falls back to the plain ring.
      const double block = n / p;
      const double bufs = p > 2 ? 2.0 : 1.0;
      return copy_in + bufs * c.fresh(block, block) + ring_allreduce(n, p, c);
    }
    case OmpiAllreduce::rabenseifner:
      // A temporary of n bytes; the halving steps write n/2 + n/4 + ... of it.
      return copy_in + c.fresh(n, n * (p - 1) / p) + rabenseifner_allreduce(n, p, c);
    case OmpiAllreduce::nonoverlapping:
    case OmpiAllreduce::basic_linear:
      return copy_in + tree_allreduce(n, p, c);
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
      detail = "Open MPI (modelled as a ring)";
      return ring_reduce_scatter(n, p, costs);
  }
  return 0.0;
}

}  // namespace scalelab::model
