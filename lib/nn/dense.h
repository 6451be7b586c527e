// Dense: a fully connected layer, y = act(x W^T + b), weights (units, inputs) as in PyTorch, with a
// fused activation as Keras' Dense(units, activation='relu'). Input (batch, features); Model
// inserts no reshape: use Flatten before it for images.
#pragma once
#include "nn/activation.h"
#include "nn/init.h"
#include "nn/layer.h"

namespace scalelab::nn {

class Dense final : public Layer {
 public:
  Dense(std::size_t units, Activation activation, Init init = Init::he_uniform);
  [[nodiscard]] std::string type() const override { return "Dense"; }
  [[nodiscard]] Shape output_shape(const Shape& in) const override;
  void declare(ParameterSet& params, const std::string& name, const Shape& in) override;
  void initialize(ParameterSet& params, Rng& rng) override;
  void reserve(const Shape& in_shape, std::size_t max_batch) override;
  void forward(ConstTensorView in, TensorView out, bool training) override;
  void backward(ConstTensorView in, ConstTensorView out, ConstTensorView dout, TensorView din) override;
  [[nodiscard]] FlopCount flops(const Shape& in) const override;
  [[nodiscard]] std::size_t parameter_count() const override { return units_ * inputs_ + units_; }
  [[nodiscard]] std::vector<std::size_t> parameter_ids() const override { return {w_, b_}; }
  [[nodiscard]] Activation activation() const { return activation_; }  // for other engines (gpu/)

 private:
  std::size_t units_;
  Activation activation_;
  Init init_;
  std::size_t inputs_ = 0;
  ParameterSet* params_ = nullptr;
  std::size_t w_ = 0, b_ = 0;
  Tensor dz_;  // (batch, units): the gradient after the activation
};

}  // namespace scalelab::nn
