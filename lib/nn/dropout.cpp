// Dropout forward and backward (see dropout.h).
#include "nn/dropout.h"

#include <algorithm>
#include <cmath>

namespace scalelab::nn {
namespace {

// splitmix64 finaliser: a good 64-bit hash of (key + counter).
inline std::uint64_t mix(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

}  // namespace

Dropout::Dropout(float rate) : rate_(rate) {
  if (!(rate >= 0.0f && rate < 1.0f)) throw_usage("Dropout rate " + std::to_string(rate) + ": it must be in [0, 1)");
}

void Dropout::reserve(const Shape& in_shape, std::size_t max_batch) { mask_.assign(max_batch * in_shape.numel(), 0.0f); }

void Dropout::forward(ConstTensorView in, TensorView out, bool training) {
  const std::size_t n = in.numel();
  last_training_ = training && rate_ > 0.0f;
  if (!last_training_) {
    std::copy_n(in.data, n, out.data);
    return;
  }
  const std::uint64_t key = rng_.next_u64();
  // Keep when a 16-bit uniform draw is >= rate * 65536 (the rate's resolution is 1/65536: 0.25 and
  // 0.5 are exact); four draws per 64-bit hash, which the compiler vectorises.
  const auto threshold = static_cast<std::uint32_t>(std::lround(double(rate_) * 65536.0));
  const float scale = 1.0f / (1.0f - rate_);
  float* mask = mask_.data();
  const std::size_t groups = n / 4;
  for (std::size_t j = 0; j < groups; ++j) {
    const std::uint64_t r = mix(key + 0x9E3779B97F4A7C15ull * (j + 1));
    for (std::size_t t = 0; t < 4; ++t)
      mask[4 * j + t] = static_cast<std::uint32_t>((r >> (16 * t)) & 0xFFFFu) >= threshold ? scale : 0.0f;
  }
  const std::uint64_t last = mix(key + 0x9E3779B97F4A7C15ull * (groups + 1));
  for (std::size_t i = 4 * groups; i < n; ++i)
    mask[i] = static_cast<std::uint32_t>((last >> (16 * (i - 4 * groups))) & 0xFFFFu) >= threshold ? scale : 0.0f;
  for (std::size_t i = 0; i < n; ++i) out.data[i] = in.data[i] * mask[i];
}

void Dropout::backward(ConstTensorView /*in*/, ConstTensorView /*out*/, ConstTensorView dout, TensorView din) {
  if (din.empty()) return;
  const std::size_t n = dout.numel();
  if (!last_training_) {
    std::copy_n(dout.data, n, din.data);
    return;
  }
  for (std::size_t i = 0; i < n; ++i) din.data[i] = dout.data[i] * mask_[i];
}

}  // namespace scalelab::nn
