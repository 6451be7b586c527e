// What one rank pays for the primitives every collective algorithm is built from: the input of
// each algorithm's cost formula (AlgorithmDescriptor::cost, algorithm.h), which follows that
// algorithm's own message pattern:
//   message(m)  one exchange of m bytes with a peer (a send and a receive at once, as the ring
//               and recursive doubling do; a lone send or receive costs the same here)
//   reduce(m)   combining m bytes into the output (out = a + b)
//   exchange_reduce(m) one exchange of m bytes into a scratch buffer, then the received m bytes
//               combined with the rank's own into the output: a step of every reduce-scatter
//               phase (ring, recursive halving and doubling, a tree's parent)
//   copy(m)     copying m bytes locally
//   sync()      one rank's wait at flags in node shared memory until every peer of its node has
//               arrived (the shared-memory allreduce's only synchronisation)
//   peer_copy(m) copying m bytes another rank of the node has just written, out of its core's cache
//   staged(m)   one step of the shared-memory allreduce between 2 ranks: each copies its m bytes
//               into node shared memory, they meet at the flags, and each reduces both ranks' m
//               bytes into its output, reading the peer's straight from the other core's cache
//   fresh(a, t) a temporary of a bytes allocated, t bytes of it touched, and freed, within the
//               call: page faults when the allocator maps fresh pages for it; 0 when it reuses memory
//   reclaim(m, w) what writing m bytes costs beyond a copy's or a message's own price when the peer
//               read those lines and has touched w bytes of other memory since: taking them back
//               from the other core's cache (an algorithm writing into a block it sent, or a call
//               writing what the previous call sent)
// AlphaBeta is the textbook model (Thakur, Rabenseifner, Gropp 2005): message = a + m b,
// reduce = m g. The calibrated CPU model (CpuCosts, model/profile.h) and the GPU fabric model
// (GpuCosts, model/predict.cpp) implement the same interface, so each algorithm's formula exists once.
#pragma once

namespace scalelab::collectives {

class Costs {
 public:
  virtual ~Costs() = default;
  [[nodiscard]] virtual double message(double bytes) const = 0;  // seconds
  [[nodiscard]] virtual double reduce(double bytes) const = 0;
  [[nodiscard]] virtual double copy(double bytes) const = 0;
  // Its parts unless measured whole; measured, it includes what the parts leave out: writing an
  // output the peer has read since (a collective called again on the same buffers: its allgather
  // phase read it), which takes those lines back from the other core, and the received bytes
  // reduced while still in cache, from a scratch buffer that stays in cache. OwnedOutput (below)
  // prices it as its parts again, for calls whose output this rank's core has just written.
  [[nodiscard]] virtual double exchange_reduce(double bytes) const { return message(bytes) + reduce(bytes); }
  [[nodiscard]] virtual double fresh(double /*alloc_bytes*/, double /*touched_bytes*/) const { return 0.0; }
  // Nothing unless measured.
  [[nodiscard]] virtual double reclaim(double /*bytes*/, double /*since*/) const { return 0.0; }
  // Priced as an empty message unless measured: an upper bound, since a message between ranks of
  // one node itself waits on such flags.
  [[nodiscard]] virtual double sync() const { return message(0); }
  // A local copy unless measured.
  [[nodiscard]] virtual double peer_copy(double bytes) const { return copy(bytes); }
  // Its parts unless measured whole; measured, it includes what the parts leave out: reading lines
  // another core has just written, and both cores doing so at once.
  [[nodiscard]] virtual double staged(double bytes) const { return copy(bytes) + sync() + reduce(bytes); }
};

// The same costs for a call whose output this rank's core has just written (in place, where the
// caller has just put its input there; or after an algorithm's own copy of the input into the
// output): no peer holds the output's lines, so a reduce-scatter step costs its parts.
class OwnedOutput final : public Costs {
 public:
  explicit OwnedOutput(const Costs& c) : c_(c) {}
  [[nodiscard]] double message(double m) const override { return c_.message(m); }
  [[nodiscard]] double reduce(double m) const override { return c_.reduce(m); }
  [[nodiscard]] double copy(double m) const override { return c_.copy(m); }
  [[nodiscard]] double exchange_reduce(double m) const override { return c_.message(m) + c_.reduce(m); }
  [[nodiscard]] double fresh(double a, double t) const override { return c_.fresh(a, t); }
  [[nodiscard]] double reclaim(double m, double w) const override { return c_.reclaim(m, w); }
  [[nodiscard]] double sync() const override { return c_.sync(); }
  [[nodiscard]] double peer_copy(double m) const override { return c_.peer_copy(m); }
  [[nodiscard]] double staged(double m) const override { return c_.staged(m); }

 private:
  const Costs& c_;
};

// a: seconds per message; b: seconds per byte moved; g: seconds per byte reduced; c: per byte copied.
class AlphaBeta final : public Costs {
 public:
  AlphaBeta(double a, double b, double g, double c = 0.0) : a_(a), b_(b), g_(g), c_(c) {}
  [[nodiscard]] double message(double bytes) const override { return a_ + bytes * b_; }
  [[nodiscard]] double reduce(double bytes) const override { return bytes * g_; }
  [[nodiscard]] double copy(double bytes) const override { return bytes * c_; }

 private:
  double a_, b_, g_, c_;
};

}  // namespace scalelab::collectives
