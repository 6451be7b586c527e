// InMemoryDataset: uint8 pixels to float32 in [0, 1] per batch (data/dataset.h).
#include "data/dataset.h"

#include "core/error.h"

namespace scalelab::data {

InMemoryDataset::InMemoryDataset(std::string name, ImageShape shape, int classes, std::vector<std::uint8_t> pixels,
                                 std::vector<std::uint8_t> labels)
    : name_(std::move(name)), shape_(shape), classes_(classes), pixels_(std::move(pixels)), labels_(std::move(labels)) {
  if (pixels_.size() != labels_.size() * shape_.elements()) {
    throw_input(name_ + ": " + std::to_string(pixels_.size()) + " pixel bytes do not make " +
                std::to_string(labels_.size()) + " images of " + std::to_string(shape_.elements()) + " pixels");
  }
}

void InMemoryDataset::fill(std::span<const std::size_t> indices, float* images, std::int32_t* labels) const {
  const std::size_t n = shape_.elements();
  constexpr float kScale = 1.0f / 255.0f;
  for (std::size_t i = 0; i < indices.size(); ++i) {
    const std::uint8_t* src = pixels_.data() + indices[i] * n;
    float* dst = images + i * n;
    for (std::size_t k = 0; k < n; ++k) dst[k] = static_cast<float>(src[k]) * kScale;
    labels[i] = labels_[indices[i]];
  }
}

}  // namespace scalelab::data
