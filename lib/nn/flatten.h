// Flatten: (C, H, W) -> (C*H*W) in NCHW order, as Keras' Flatten on channels-first data and
// PyTorch's nn.Flatten. It aliases its input: Model passes the same memory through.
#pragma once
#include "nn/layer.h"

namespace scalelab::nn {

class Flatten final : public Layer {
 public:
  [[nodiscard]] std::string type() const override { return "Flatten"; }
  [[nodiscard]] Shape output_shape(const Shape& in) const override { return {in.numel()}; }
  [[nodiscard]] bool aliases_input() const override { return true; }
  // Used only when called directly (Model never does): a copy.
  void forward(ConstTensorView in, TensorView out, bool training) override;
  void backward(ConstTensorView in, ConstTensorView out, ConstTensorView dout, TensorView din) override;
};

}  // namespace scalelab::nn
