// The cost formulas of the point-to-point algorithms, over the primitives of costs.h. Each is
// defined in its algorithm's own file, beside the code whose message pattern it follows (which
// rank sends what to whom, in which order, in which segments); the descriptors' `cost`
// (algorithm.h) call them with the implementation's own segments, and lib/model's Open MPI
// emulation calls them with Open MPI's. With AlphaBeta costs and no segmentation they reduce to
// the textbook formulas (docs/cost-model.md), e.g.
//   ring allreduce = 2(p-1) a + 2 n (p-1)/p b + n (p-1)/p g
// n is the buffer in bytes (allreduce, broadcast: the whole buffer; allgather, reduce-scatter:
// the whole output/input of p blocks, as nccl-tests prints it), p the ranks, `segment` the bytes
// a block is cut into (0: whole). Results are seconds; 0 below two ranks or for an empty buffer.
#pragma once
#include "collectives/costs.h"

namespace scalelab::collectives {

[[nodiscard]] double ring_reduce_scatter(double n, int p, const Costs& c, double segment = 0);
[[nodiscard]] double ring_allgather(double n, int p, const Costs& c);
[[nodiscard]] double recursive_doubling_allgather(double n, int p, const Costs& c);
[[nodiscard]] double ring_allreduce(double n, int p, const Costs& c, double segment = 0);
[[nodiscard]] double recursive_doubling_allreduce(double n, int p, const Costs& c);
[[nodiscard]] double rabenseifner_allreduce(double n, int p, const Costs& c);
// Binary tree (children 2i+1, 2i+2): reduce to rank 0 then broadcast.
[[nodiscard]] double tree_allreduce(double n, int p, const Costs& c, double segment = 0);
// Gather to rank 0, reduce there, send the result to everyone (the parameter-server pattern).
[[nodiscard]] double naive_allreduce(double n, int p, const Costs& c);
// Binomial tree from the root: ceil(log2 p) rounds of whole-buffer messages.
[[nodiscard]] double binomial_broadcast(double n, int p, const Costs& c);
[[nodiscard]] double ring_broadcast(double n, int p, const Costs& c, double segment = 0);
[[nodiscard]] double naive_broadcast(double n, int p, const Costs& c);

}  // namespace scalelab::collectives
