// MaxPooling2D: the maximum over each k x k window (stride k by default, no padding: Keras'
// MaxPooling2D(pool_size=k)). Forward records where in its window each maximum came from (two
// bytes per output), so backward routes the gradient there without comparing again (ties go to
// the first maximum, as in PyTorch).
#pragma once
#include <cstdint>
#include <vector>

#include "nn/layer.h"

namespace scalelab::nn {

class MaxPool2D final : public Layer {
 public:
  static constexpr std::size_t kMaxPool = 255;  // a window's places, row * pool + column, fit in 16 bits
  static constexpr std::uint16_t kNoGradient = 0xFFFF;  // a place that receives no gradient (the fused ReLU's)
  explicit MaxPool2D(std::size_t pool, std::size_t stride = 0);
  [[nodiscard]] std::string type() const override { return "MaxPooling2D"; }
  [[nodiscard]] Shape output_shape(const Shape& in) const override;
  void reserve(const Shape& in_shape, std::size_t max_batch) override;
  void forward(ConstTensorView in, TensorView out, bool training) override;
  // forward() for images [b0, b0 + n) of the batch only, read from `images` (those n images'
  // planes of h x w, one after another) into the whole batch's `out`: the layer before calls it
  // on each chunk it has just computed, while the chunk is in cache (Conv2D::forward_pooled).
  void forward_images(const float* images, std::size_t h, std::size_t w, TensorView out, std::size_t b0,
                      std::size_t n);
  void backward(ConstTensorView in, ConstTensorView out, ConstTensorView dout, TensorView din) override;
  // backward() for one input plane (plane = image x channels + channel) of h x w, written whole to
  // `din_plane` (0 where no window's maximum lies): the layer before calls it on each chunk of
  // images as it needs them, while they are in cache (Conv2D::backward_pooled).
  void backward_plane(std::size_t h, std::size_t w, ConstTensorView out, ConstTensorView dout, std::size_t plane,
                      float* din_plane) const;
  [[nodiscard]] std::size_t pool() const { return pool_; }  // for other engines (gpu/)
  [[nodiscard]] std::size_t stride() const { return stride_; }
  // Fusion with the ReLU of the layer before (nn::Model::build sets it): backward also applies
  // that ReLU's derivative. A window's gradient reaches only its maximum, where the ReLU's output
  // is this layer's output, so the mask is (output > 0): forward records it with each place
  // (kNoGradient where it is 0), and backward reads no more than without it. The layer before
  // then skips its own mask (Conv2D::set_output_gradient_masked). The gradients are the same to
  // the last bit. Set between steps, not between a forward pass and its backward.
  void set_applies_relu_mask(bool on) { relu_mask_ = on; }
  [[nodiscard]] bool applies_relu_mask() const { return relu_mask_; }

 private:
  std::size_t pool_, stride_;
  bool relu_mask_ = false;
  std::vector<std::uint16_t> where_;  // per output: the maximum's place in its window, or kNoGradient
};

}  // namespace scalelab::nn
