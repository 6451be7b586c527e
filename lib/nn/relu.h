// ReLU as a layer of its own (after BatchNorm; Conv2D and Dense fuse it instead).
#pragma once
#include "nn/layer.h"

namespace scalelab::nn {

class ReLU final : public Layer {
 public:
  [[nodiscard]] std::string type() const override { return "ReLU"; }
  [[nodiscard]] Shape output_shape(const Shape& in) const override { return in; }
  void forward(ConstTensorView in, TensorView out, bool training) override;
  void backward(ConstTensorView in, ConstTensorView out, ConstTensorView dout, TensorView din) override;
};

}  // namespace scalelab::nn
