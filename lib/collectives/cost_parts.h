// Pieces the cost formulas of several algorithms share (cost_formulas.h): how a block is cut
// into segments, and the critical path of a binary tree. Internal to collectives/.
#pragma once
#include "collectives/costs.h"

namespace scalelab::collectives::cost_parts {

// A block of b bytes cut into segments of s bytes (s = 0: one piece): pieces and piece size.
struct Cut {
  double pieces = 1;
  double piece = 0;
};
[[nodiscard]] Cut cut(double b, double s);

// The largest k with 2^k <= p.
[[nodiscard]] int floor_log2(int p);

// Critical path of a blocking binary-tree reduce-then-broadcast (reduce = false: broadcast only)
// of one message of m bytes: a parent receives its children in order (each receive then a
// reduction), sends up, waits for the result, then sends to its children in order.
[[nodiscard]] double tree_once(double m, int p, const Costs& c, bool reduce);

// The busiest rank's work per segment in a pipelined tree: what bounds the pipeline's rate.
[[nodiscard]] double tree_stage(double m, int p, const Costs& c, bool reduce);

// A tree of segments: the first segment's whole path, then one stage per further segment.
[[nodiscard]] double pipelined_tree(double n, int p, const Costs& c, double segment, bool reduce);

}  // namespace scalelab::collectives::cost_parts
