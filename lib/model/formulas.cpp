// Collective cost formulas (see formulas.h and docs/cost-model.md for the derivations).
#include "model/formulas.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace scalelab::model {

namespace {

int floor_log2(int p) {
  int k = 0;
  while ((2 << k) <= p) ++k;
  return k;
}

// A block of b bytes cut into segments of s bytes (s = 0: one piece): pieces and piece size.
struct Cut {
  double pieces = 1;
  double piece = 0;
};
Cut cut(double b, double s) {
  if (s <= 0 || b <= s) return {1, b};
  const double k = std::ceil(b / s);
  return {k, b / k};
}

// Critical path of a blocking binary-tree reduce-then-broadcast of one message of m bytes:
// a parent receives its children in order (each receive then a reduction), sends up, waits for
// the result, then sends to its children in order.
double tree_once(double m, int p, const Costs& c, bool reduce) {
  std::vector<double> up(static_cast<std::size_t>(p), 0.0);
  for (int r = p - 1; r >= 0; --r) {
    double t = 0;
    for (int child : {2 * r + 1, 2 * r + 2}) {
      if (child >= p) continue;
      t = std::max(t, up[static_cast<std::size_t>(child)]) + c.message(m) + (reduce ? c.reduce(m) : 0.0);
    }
    up[static_cast<std::size_t>(r)] = t;
  }
  std::vector<double> down(static_cast<std::size_t>(p), 0.0);
  down[0] = reduce ? up[0] : 0.0;
  double end = down[0];
  for (int r = 0; r < p; ++r) {
    double t = down[static_cast<std::size_t>(r)];
    for (int child : {2 * r + 1, 2 * r + 2}) {
      if (child >= p) continue;
      t += c.message(m);
      down[static_cast<std::size_t>(child)] = t;
      end = std::max(end, t);
    }
  }
  return end;
}

// The busiest rank's work per segment in a pipelined tree: what bounds the pipeline's rate.
double tree_stage(double m, int p, const Costs& c, bool reduce) {
  const int children = std::min(2, p - 1);
  const double up = reduce ? children * (c.message(m) + c.reduce(m)) + c.message(m) : 0.0;
  return up + c.message(m) + children * c.message(m);
}

}  // namespace

Segments implementation_segments() { return {1024.0 * 1024, 4, 256.0 * 1024, 128.0 * 1024}; }

double Segments::ring_segment(double block) const {
  return std::max(ring_min_segment, std::ceil(block / ring_max_segments));
}

double ring_reduce_scatter(double n, int p, const Costs& c, double segment) {
  if (p < 2 || n <= 0) return 0.0;
  const Cut k = cut(n / p, segment);
  return (p - 1) * k.pieces * (c.message(k.piece) + c.reduce(k.piece));
}

double ring_allgather(double n, int p, const Costs& c) {
  if (p < 2 || n <= 0) return 0.0;
  return (p - 1) * c.message(n / p);
}

double ring_allreduce(double n, int p, const Costs& c, double segment) {
  return ring_reduce_scatter(n, p, c, segment) + ring_allgather(n, p, c);
}

double recursive_doubling_allreduce(double n, int p, const Costs& c) {
  if (p < 2 || n <= 0) return 0.0;
  const int k = floor_log2(p);
  double t = k * (c.message(n) + c.reduce(n));
  // Ranks beyond the largest power of two fold their data in first and get the result last.
  if ((1 << k) != p) t += c.message(n) + c.reduce(n) + c.message(n);
  return t;
}

double rabenseifner_allreduce(double n, int p, const Costs& c) {
  if (p < 2 || n <= 0) return 0.0;
  const int k = floor_log2(p);
  double t = 0;
  double m = n;
  for (int s = 0; s < k; ++s) {
    m /= 2;
    t += c.message(m) + c.reduce(m) + c.message(m);  // halving step, and its doubling mirror
  }
  if ((1 << k) != p) t += c.message(n) + c.reduce(n) + c.message(n);
  return t;
}

double tree_allreduce(double n, int p, const Costs& c, double segment) {
  if (p < 2 || n <= 0) return 0.0;
  const Cut k = cut(n, segment);
  if (k.pieces <= 1) return tree_once(n, p, c, true);
  return tree_once(k.piece, p, c, true) + (k.pieces - 1) * tree_stage(k.piece, p, c, true);
}

double naive_allreduce(double n, int p, const Costs& c) {
  if (p < 2 || n <= 0) return 0.0;
  return (p - 1) * (c.message(n) + c.reduce(n)) + (p - 1) * c.message(n);
}

double tree_broadcast(double n, int p, const Costs& c, double segment) {
  if (p < 2 || n <= 0) return 0.0;
  const Cut k = cut(n, segment);
  if (k.pieces <= 1) return tree_once(n, p, c, false);
  return tree_once(k.piece, p, c, false) + (k.pieces - 1) * tree_stage(k.piece, p, c, false);
}

double ring_broadcast(double n, int p, const Costs& c, double segment) {
  if (p < 2 || n <= 0) return 0.0;
  // A pipeline along the ring: the first piece takes p-1 hops, then one piece per hop time.
  const Cut k = cut(n, segment);
  return (p - 2 + k.pieces) * c.message(k.piece);
}

double naive_broadcast(double n, int p, const Costs& c) {
  if (p < 2 || n <= 0) return 0.0;
  return (p - 1) * c.message(n);
}

double bus_factor(collectives::Collective c, int p) {
  return p < 2 ? 1.0 : collectives::busbw_factor(c, p);
}

}  // namespace scalelab::model
