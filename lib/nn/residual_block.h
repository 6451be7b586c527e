// ResidualBlock: ResNet's basic block (He et al. 2016) as one layer:
//   out = relu( bn2(conv2(relu(bn1(conv1(x))))) + shortcut(x) )
// conv1 is 3x3 with the block's stride, conv2 3x3 stride 1, both padded to keep the size and
// without bias (BatchNorm follows). shortcut is the identity when the shape is kept, else a 1x1
// convolution with the stride followed by BatchNorm. Its sublayers own their buffers; the block
// keeps the intermediate activations and gradients in its own Tensors.
#pragma once
#include <memory>

#include "nn/batch_norm.h"
#include "nn/conv2d.h"
#include "nn/relu.h"

namespace scalelab::nn {

class ResidualBlock final : public Layer {
 public:
  ResidualBlock(std::size_t filters, std::size_t stride);
  [[nodiscard]] std::string type() const override { return "ResidualBlock"; }
  [[nodiscard]] Shape output_shape(const Shape& in) const override;
  void declare(ParameterSet& params, const std::string& name, const Shape& in) override;
  void initialize(ParameterSet& params, Rng& rng) override;
  void reserve(const Shape& in_shape, std::size_t max_batch) override;
  void forward(ConstTensorView in, TensorView out, bool training) override;
  void backward(ConstTensorView in, ConstTensorView out, ConstTensorView dout, TensorView din) override;
  [[nodiscard]] FlopCount flops(const Shape& in) const override;
  [[nodiscard]] std::size_t parameter_count() const override;
  void set_statistics_reducer(const StatisticsReducer& reducer) override;
  [[nodiscard]] bool uses_batch_statistics() const override { return true; }  // bn1, bn2
  // Every sublayer's parameters, in declaration order (conv1, bn1, conv2, bn2[, shortcut, shortcut_bn]).
  [[nodiscard]] std::vector<std::size_t> parameter_ids() const override;

  // The sublayers, for other engines (gpu/) that rebuild the block; the shortcut's two only when
  // projects_input() (after declare()).
  [[nodiscard]] bool projects_input() const { return project_; }
  [[nodiscard]] const Conv2D& conv1() const { return conv1_; }
  [[nodiscard]] const BatchNorm& bn1() const { return bn1_; }
  [[nodiscard]] const Conv2D& conv2() const { return conv2_; }
  [[nodiscard]] const BatchNorm& bn2() const { return bn2_; }
  [[nodiscard]] const Conv2D& shortcut() const { return conv_s_; }
  [[nodiscard]] const BatchNorm& shortcut_bn() const { return bn_s_; }

  // The block's steps in forward order, each with nn's own counts, for readers that price layers
  // one by one (sim::workload_from_model). type is the sublayer's type(), or "Add+ReLU" for the
  // fused residual add and activation (counted as 0 FLOPs, as ReLU is). Needs declare() first.
  struct Part {
    std::string name;  // "conv1", "bn1", "relu", "conv2", "bn2", "shortcut", "shortcut_bn", "add_relu"
    std::string type;
    double forward_flops = 0;
    std::size_t params = 0;
    Shape in, out;  // per sample; add_relu reads two tensors shaped like out
  };
  [[nodiscard]] std::vector<Part> parts() const;

 private:
  [[nodiscard]] bool projects(const Shape& in) const { return stride_ != 1 || in[0] != filters_; }
  std::size_t filters_, stride_;
  Shape in_shape_, mid_shape_;
  Conv2D conv1_, conv2_, conv_s_;
  BatchNorm bn1_, bn2_, bn_s_;
  ReLU relu_;
  bool project_ = false;
  // Activations: conv1, bn1, relu, conv2, bn2, shortcut conv, shortcut bn; and gradient scratch.
  Tensor a_c1_, a_b1_, a_r_, a_c2_, a_b2_, a_cs_, a_bs_;
  Tensor g_sum_, g_mid_a_, g_mid_b_, g_in_;
};

}  // namespace scalelab::nn
