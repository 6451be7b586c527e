// Shared pieces of the cost formulas (cost_parts.h).
#include "collectives/cost_parts.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

namespace scalelab::collectives::cost_parts {

Cut cut(double b, double s) {
  if (s <= 0 || b <= s) return {1, b};
  const double k = std::ceil(b / s);
  return {k, b / k};
}

int floor_log2(int p) {
  int k = 0;
  while ((2 << k) <= p) ++k;
  return k;
}

double tree_once(double m, int p, const Costs& c, bool reduce) {
  std::vector<double> up(static_cast<std::size_t>(p), 0.0);
  for (int r = p - 1; r >= 0; --r) {
    double t = 0;
    for (int child : {2 * r + 1, 2 * r + 2}) {
      if (child >= p) continue;
      t = std::max(t, up[static_cast<std::size_t>(child)]) + (reduce ? c.exchange_reduce(m) : c.message(m));
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

double tree_stage(double m, int p, const Costs& c, bool reduce) {
  const int children = std::min(2, p - 1);
  const double up = reduce ? children * c.exchange_reduce(m) + c.message(m) : 0.0;
  return up + c.message(m) + children * c.message(m);
}

double pipelined_tree(double n, int p, const Costs& c, double segment, bool reduce) {
  if (p < 2 || n <= 0) return 0.0;
  const Cut k = cut(n, segment);
  if (k.pieces <= 1) return tree_once(n, p, c, reduce);
  return tree_once(k.piece, p, c, reduce) + (k.pieces - 1) * tree_stage(k.piece, p, c, reduce);
}

}  // namespace scalelab::collectives::cost_parts
