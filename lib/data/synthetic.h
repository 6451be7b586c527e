// The synthetic dataset: the course's "synthetic data" mode, which takes the input pipeline out of
// the picture. Samples are generated on the fly from (seed, index) with no I/O and no storage:
// sample i has label hash(i) mod classes and pixels = half its class's fixed random pattern plus
// half uniform noise, so a model can learn it (useful in tests) and the same index always gives
// the same sample on every rank.
#pragma once
#include <cstdint>
#include <vector>

#include "data/dataset.h"

namespace scalelab::data {

class SyntheticDataset final : public Dataset {
 public:
  // `split` separates train (0) from test (1) samples of the same seed.
  SyntheticDataset(std::size_t samples, ImageShape shape, int classes, std::uint64_t seed, int split);
  [[nodiscard]] std::string name() const override { return split_ == 0 ? "synthetic train" : "synthetic test"; }
  [[nodiscard]] std::size_t size() const override { return samples_; }
  [[nodiscard]] ImageShape shape() const override { return shape_; }
  [[nodiscard]] int classes() const override { return classes_; }
  void fill(std::span<const std::size_t> indices, float* images, std::int32_t* labels) const override;
  [[nodiscard]] int label_of(std::size_t index) const;

 private:
  std::size_t samples_;
  ImageShape shape_;
  int classes_;
  std::uint64_t seed_;
  int split_;
  std::vector<float> patterns_;  // classes x elements, in [0, 0.5]
};

}  // namespace scalelab::data
