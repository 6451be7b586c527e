// Dropout (inverted, as Keras and PyTorch): in training each unit is kept with probability 1 - rate
// and scaled by 1/(1 - rate); in evaluation it is the identity. The mask comes from an explicit
// seed: each training forward draws one 64-bit key from a core Rng (seeded from the model seed and
// a stream, e.g. the rank) and expands it with a counter-based hash (four 16-bit draws per
// hash), which is reproducible and far cheaper per element than drawing each from the Rng.
#pragma once
#include <cstdint>
#include <vector>

#include "nn/layer.h"

namespace scalelab::nn {

class Dropout final : public Layer {
 public:
  explicit Dropout(float rate);
  [[nodiscard]] std::string type() const override { return "Dropout"; }
  [[nodiscard]] Shape output_shape(const Shape& in) const override { return in; }
  void reserve(const Shape& in_shape, std::size_t max_batch) override;
  void forward(ConstTensorView in, TensorView out, bool training) override;
  void backward(ConstTensorView in, ConstTensorView out, ConstTensorView dout, TensorView din) override;
  void reseed(std::uint64_t seed, std::uint64_t stream) override { rng_ = Rng(seed, stream); }
  // One key per training forward: skipping n forwards discards n draws.
  void skip_random(std::uint64_t forwards) override { rng_.engine().discard(forwards); }
  [[nodiscard]] float rate() const { return rate_; }

 private:
  float rate_;
  Rng rng_{0};
  bool last_training_ = false;
  float scale_ = 1.0f;               // 1/(1-rate)
  std::vector<std::uint64_t> keep_;  // one bit per element of the last training forward: kept (scaled) or dropped
};

}  // namespace scalelab::nn
