// "Synthetic data" in the sense of the course's input-pipeline lab: the first `count` samples of
// a data set prepared once (read, decoded, augmented: whatever the data set's fill() does) and
// then handed out again for every index, so a training step no longer waits for an input
// pipeline. The size stays the source's, so an epoch has the same steps; sample i is prepared
// sample i % count (its label too). `train --synthetic-data` uses it to measure the model alone,
// against the same training with its real pipeline.
//
//   PreparedDataset fast(real, 256);   // fills 256 samples from `real` now, copies them after
#pragma once
#include <cstdint>
#include <vector>

#include "data/dataset.h"

namespace scalelab::data {

class PreparedDataset final : public Dataset {
 public:
  // Prepares min(count, source.size()) samples (count >= 1) from `source`, which it does not keep.
  PreparedDataset(const Dataset& source, std::size_t count);
  [[nodiscard]] std::string name() const override { return name_; }
  [[nodiscard]] std::size_t size() const override { return size_; }
  [[nodiscard]] ImageShape shape() const override { return shape_; }
  [[nodiscard]] int classes() const override { return classes_; }
  void fill(std::span<const std::size_t> indices, float* images, std::int32_t* labels) const override;

 private:
  std::string name_;
  std::size_t size_;
  ImageShape shape_;
  int classes_;
  std::size_t count_;
  std::vector<float> images_;
  std::vector<std::int32_t> labels_;
};

}  // namespace scalelab::data
