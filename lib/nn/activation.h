// Activations fused into Conv2D and Dense (as Keras' activation= argument): the forward pass
// applies them while writing the output, and the backward pass masks the incoming gradient with
// the saved output (ReLU's output is > 0 exactly where its input was), so no separate pass or
// buffer is needed.
#pragma once
#include <cstddef>

namespace scalelab::nn {

enum class Activation { none, relu };

[[nodiscard]] inline const char* activation_name(Activation a) { return a == Activation::relu ? "relu" : "linear"; }

// dz[i] = dy[i] * act'(from the output y[i]); dz may alias dy.
inline void activation_backward(Activation a, const float* y, const float* dy, float* dz, std::size_t n) {
  if (a == Activation::relu) {
    for (std::size_t i = 0; i < n; ++i) dz[i] = y[i] > 0.0f ? dy[i] : 0.0f;
  } else if (dz != dy) {
    for (std::size_t i = 0; i < n; ++i) dz[i] = dy[i];
  }
}

}  // namespace scalelab::nn
