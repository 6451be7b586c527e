// Small statistics used by every measuring command: median (mean of the two middle values for
// an even count, as nccl-tests' and the peers' medians), percentiles, mean.
#pragma once
#include <vector>

namespace scalelab {

[[nodiscard]] double median(std::vector<double> values);          // empty -> NaN
[[nodiscard]] double percentile(std::vector<double> values, double p);  // p in [0,100], linear interpolation
[[nodiscard]] double mean(const std::vector<double>& values);     // empty -> NaN

}  // namespace scalelab
