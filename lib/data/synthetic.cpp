// SyntheticDataset (data/synthetic.h): a counter-based generator, so fill() needs no state and
// any thread can produce any sample.
#include "data/synthetic.h"

#include "core/error.h"
#include "core/rng.h"

namespace scalelab::data {
namespace {

std::uint64_t splitmix(std::uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

}  // namespace

SyntheticDataset::SyntheticDataset(std::size_t samples, ImageShape shape, int classes, std::uint64_t seed, int split)
    : samples_(samples), shape_(shape), classes_(classes), seed_(seed), split_(split) {
  if (classes_ < 2 || classes_ > 255) throw_usage("synthetic dataset: classes must be 2..255, got " + std::to_string(classes_));
  if (shape_.elements() == 0) throw_usage("synthetic dataset: the image shape has no pixels");
  Rng rng(seed, 0x5157);  // patterns depend on the seed only: train and test share them
  patterns_.resize(static_cast<std::size_t>(classes_) * shape_.elements());
  for (float& p : patterns_) p = rng.uniform(0.0f, 0.5f);
}

int SyntheticDataset::label_of(std::size_t index) const {
  const std::uint64_t h = splitmix(seed_ ^ splitmix((std::uint64_t{static_cast<std::uint32_t>(split_)} << 40) + index));
  return static_cast<int>(h % static_cast<std::uint64_t>(classes_));
}

void SyntheticDataset::fill(std::span<const std::size_t> indices, float* images, std::int32_t* labels) const {
  const std::size_t n = shape_.elements();
  constexpr float kToUnit = 0.5f / 4294967296.0f;  // a 32-bit draw to [0, 0.5)
  for (std::size_t i = 0; i < indices.size(); ++i) {
    const std::size_t index = indices[i];
    const int label = label_of(index);
    const float* pattern = patterns_.data() + static_cast<std::size_t>(label) * n;
    float* dst = images + i * n;
    std::uint64_t state = splitmix(seed_ + 0x1234567ull * (index + 1) + (std::uint64_t{static_cast<std::uint32_t>(split_)} << 50));
    for (std::size_t k = 0; k + 1 < n; k += 2) {
      state = splitmix(state);
      dst[k] = pattern[k] + static_cast<float>(state & 0xffffffffu) * kToUnit;
      dst[k + 1] = pattern[k + 1] + static_cast<float>(state >> 32) * kToUnit;
    }
    if (n % 2 == 1) dst[n - 1] = pattern[n - 1] + static_cast<float>(splitmix(state) & 0xffffffffu) * kToUnit;
    labels[i] = label;
  }
}

}  // namespace scalelab::data
