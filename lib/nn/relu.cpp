// ReLU forward and backward (see relu.h).
#include "nn/relu.h"

#include <algorithm>

#include "nn/activation.h"

namespace scalelab::nn {

void ReLU::forward(ConstTensorView in, TensorView out, bool /*training*/) {
  const std::size_t n = in.numel();
  for (std::size_t i = 0; i < n; ++i) out.data[i] = std::max(in.data[i], 0.0f);
}

void ReLU::backward(ConstTensorView /*in*/, ConstTensorView out, ConstTensorView dout, TensorView din) {
  if (din.empty()) return;
  activation_backward(Activation::relu, out.data, dout.data, din.data, out.numel());
}

}  // namespace scalelab::nn
