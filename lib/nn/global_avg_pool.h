// GlobalAveragePooling2D: (C, H, W) -> (C), the mean over each channel's plane (ResNet's head).
#pragma once
#include "nn/layer.h"

namespace scalelab::nn {

class GlobalAvgPool final : public Layer {
 public:
  [[nodiscard]] std::string type() const override { return "GlobalAveragePooling2D"; }
  [[nodiscard]] Shape output_shape(const Shape& in) const override;
  void forward(ConstTensorView in, TensorView out, bool training) override;
  void backward(ConstTensorView in, ConstTensorView out, ConstTensorView dout, TensorView din) override;
};

}  // namespace scalelab::nn
