// The cost of each collective algorithm, written once, over the primitives of model/costs.h.
// Each function follows the message pattern of the algorithm of the same name in collectives/
// (which rank sends what to whom, in which order, in which segments), so that with AlphaBeta
// costs and no segmentation it reduces to the textbook formulas (docs/cost-model.md), e.g.
//   ring allreduce = 2(p-1) a + 2 n (p-1)/p b + n (p-1)/p g
// and with calibrated costs it predicts the real implementation. n is the buffer in bytes
// (allreduce, broadcast: the whole buffer; allgather, reduce-scatter: the whole output/input
// of p blocks, as nccl-tests prints it), p the ranks. Results are seconds.
#pragma once
#include <cstddef>

#include "collectives/algorithm.h"
#include "model/costs.h"

namespace scalelab::model {

// How the implementations in collectives/ cut their messages (0: the whole block at once).
struct Segments {
  double ring_min_segment = 0;  // allreduce_ring.cpp: blocks up to 1 MiB go whole,
  double ring_max_segments = 1;  // larger ones in at most 4 segments
  double broadcast_ring = 0;    // broadcast_ring.cpp: 256 KiB
  double tree_pipelined = 0;    // allreduce_tree.cpp: 128 KiB
  // The segment the ring allreduce uses for blocks of `block` bytes.
  [[nodiscard]] double ring_segment(double block) const;
};
[[nodiscard]] Segments implementation_segments();

[[nodiscard]] double ring_allreduce(double n, int p, const Costs& c, double segment = 0);
[[nodiscard]] double ring_reduce_scatter(double n, int p, const Costs& c, double segment = 0);
[[nodiscard]] double ring_allgather(double n, int p, const Costs& c);
[[nodiscard]] double recursive_doubling_allreduce(double n, int p, const Costs& c);
[[nodiscard]] double rabenseifner_allreduce(double n, int p, const Costs& c);
// Binary tree (children 2i+1, 2i+2): reduce to rank 0 then broadcast; segment 0: one message.
[[nodiscard]] double tree_allreduce(double n, int p, const Costs& c, double segment = 0);
// Gather to rank 0, reduce there, send the result to everyone (the parameter-server pattern).
[[nodiscard]] double naive_allreduce(double n, int p, const Costs& c);
[[nodiscard]] double tree_broadcast(double n, int p, const Costs& c, double segment = 0);
[[nodiscard]] double ring_broadcast(double n, int p, const Costs& c, double segment = 0);
[[nodiscard]] double naive_broadcast(double n, int p, const Costs& c);

// nccl-tests' bus-bandwidth factor (collectives::busbw_factor), taken as 1 below two ranks so
// the model can convert between algbw and busbw without dividing by zero.
[[nodiscard]] double bus_factor(collectives::Collective c, int p);

}  // namespace scalelab::model
