// Fast float reductions for the engine's hot loops. A plain `s += x[i]` loop is a serial chain
// of dependent adds (the compiler may not reorder float sums), 4 cycles each: for the cnn's
// bias gradients that alone cost ~5 ms per step. Sixteen independent partial sums vectorise.
#pragma once
#include <cstddef>

namespace scalelab::nn {

[[nodiscard]] inline float sum(const float* x, std::size_t n) {
  float acc[16] = {};
  std::size_t i = 0;
  for (; i + 16 <= n; i += 16)
    for (std::size_t l = 0; l < 16; ++l) acc[l] += x[i + l];
  float s = 0.0f;
  for (; i < n; ++i) s += x[i];
  for (float a : acc) s += a;
  return s;
}

}  // namespace scalelab::nn
