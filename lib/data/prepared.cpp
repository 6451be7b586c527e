// Samples prepared once and handed out again (see prepared.h).
#include "data/prepared.h"

#include <algorithm>
#include <numeric>

namespace scalelab::data {

PreparedDataset::PreparedDataset(const Dataset& source, std::size_t count)
    : name_(source.name() + " (first " + std::to_string(std::min(count, source.size())) + " samples, prepared once)"),
      size_(source.size()),
      shape_(source.shape()),
      classes_(source.classes()),
      count_(std::max<std::size_t>(1, std::min(count, source.size()))) {
  std::vector<std::size_t> first(count_);
  std::iota(first.begin(), first.end(), std::size_t{0});
  images_.resize(count_ * shape_.elements());
  labels_.resize(count_);
  source.fill(first, images_.data(), labels_.data());
}

void PreparedDataset::fill(std::span<const std::size_t> indices, float* images, std::int32_t* labels) const {
  const std::size_t n = shape_.elements();
  for (std::size_t k = 0; k < indices.size(); ++k) {
    const std::size_t i = indices[k] % count_;
    std::copy_n(images_.data() + i * n, n, images + k * n);
    labels[k] = labels_[i];
  }
}

}  // namespace scalelab::data
