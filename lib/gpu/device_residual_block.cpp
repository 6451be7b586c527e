// ResNet's basic block on the GPU (gpu/device_layers.h's ResidualSpec): nn::ResidualBlock's
// arithmetic with fewer passes over memory. bn1's ReLU and bn2's shortcut add and ReLU are fused
// into BatchNorm's output kernel, so the block keeps conv1's output (c1), relu(bn1) (r), conv2's
// output (c2) and, when it projects, the shortcut's convolution and BatchNorm outputs.
// Backward (dy may be overwritten, dx may be null only for a first layer):
//   ds = dy masked by out > 0         (in place in dy)
//   bn2:  ds -> ga; conv2: ga -> gb;  gb masked by r > 0;  bn1: gb -> ga;  conv1: ga -> dx
//   shortcut: dx += ds, or bn_s: ds -> ga; conv_s: ga -> gi; dx += gi
#include <algorithm>
#include <memory>
#include <string>

#include "gpu/device_batch_norm.h"
#include "gpu/device_layers.h"
#include "gpu/layer_kernels.h"

namespace scalelab::gpu {
namespace {

std::size_t out_numel(const ConvSpec& s) {
  const std::size_t h = (s.in_h + 2 * s.pad - s.kernel) / s.stride + 1, w = (s.in_w + 2 * s.pad - s.kernel) / s.stride + 1;
  return s.filters * h * w;
}

class DeviceResidualBlock final : public DeviceLayer {
 public:
  DeviceResidualBlock(const ResidualSpec& s, std::size_t max_batch, DeviceContext& ctx)
      : project_(s.project), in_(s.conv1.in_c * s.conv1.in_h * s.conv1.in_w), mid_(out_numel(s.conv1)),
        conv1_(make_device_conv(s.conv1, s.conv1_slots, max_batch, ctx)),
        conv2_(make_device_conv(s.conv2, s.conv2_slots, max_batch, ctx)), bn1_(s.bn1), bn2_(s.bn2) {
    const std::size_t mid = max_batch * mid_;
    c1_.resize(mid, "the residual block's conv1 output");
    r_.resize(mid, "the residual block's bn1 output");
    c2_.resize(mid, "the residual block's conv2 output");
    ga_.resize(mid, "the residual block's gradients");
    gb_.resize(mid, "the residual block's gradients");
    ids_ = conv1_->params();
    append(bn1_.params());
    append(conv2_->params());
    append(bn2_.params());
    if (project_) {
      shortcut_ = make_device_conv(s.shortcut, s.shortcut_slots, max_batch, ctx);
      bn_s_ = std::make_unique<DeviceBatchNorm>(s.shortcut_bn);
      cs_.resize(mid, "the residual block's shortcut convolution output");
      bs_.resize(mid, "the residual block's shortcut output");
      gi_.resize(max_batch * in_, "the residual block's shortcut input gradient");
      append(shortcut_->params());
      append(bn_s_->params());
    }
  }
  [[nodiscard]] std::string type() const override { return "ResidualBlock"; }
  [[nodiscard]] std::vector<std::size_t> params() const override { return ids_; }
  [[nodiscard]] std::size_t workspace_bytes() const override {
    std::size_t w = std::max(conv1_->workspace_bytes(), conv2_->workspace_bytes());
    return shortcut_ ? std::max(w, shortcut_->workspace_bytes()) : w;
  }

  // float32 only (DeviceModel refuses it in bf16 and fp16).
  void forward(const void* xv, void* yv, std::size_t n, bool training, DeviceContext& ctx) override {
    const auto* x = static_cast<const float*>(xv);
    auto* y = static_cast<float*>(yv);
    conv1_->forward(x, c1_.data(), n, training, ctx);
    bn1_.forward(c1_.data(), r_.data(), n, training, ctx, nullptr, /*relu=*/true);
    conv2_->forward(r_.data(), c2_.data(), n, training, ctx);
    const float* shortcut = x;
    if (project_) {
      shortcut_->forward(x, cs_.data(), n, training, ctx);
      bn_s_->forward(cs_.data(), bs_.data(), n, training, ctx);
      shortcut = bs_.data();
    }
    bn2_.forward(c2_.data(), y, n, training, ctx, shortcut, /*relu=*/true);
  }

  void backward(const void* xv, const void* yv, void* dyv, void* dxv, std::size_t n, DeviceContext& ctx) override {
    const auto* x = static_cast<const float*>(xv);
    const auto* y = static_cast<const float*>(yv);
    auto* dy = static_cast<float*>(dyv);
    auto* dx = static_cast<float*>(dxv);
    const std::size_t mid = n * mid_;
    relu_backward(y, dy, dy, mid, ctx.stream);  // dy is now ds, the gradient at bn2 + shortcut
    bn2_.backward(c2_.data(), dy, ga_.data(), n, ctx);
    conv2_->backward(r_.data(), nullptr, ga_.data(), gb_.data(), n, ctx);
    relu_backward(r_.data(), gb_.data(), gb_.data(), mid, ctx.stream);
    bn1_.backward(c1_.data(), gb_.data(), ga_.data(), n, ctx);
    conv1_->backward(x, nullptr, ga_.data(), dx, n, ctx);
    if (project_) {
      bn_s_->backward(cs_.data(), dy, ga_.data(), n, ctx);
      shortcut_->backward(x, nullptr, ga_.data(), dx == nullptr ? nullptr : gi_.data(), n, ctx);
      if (dx != nullptr) add_into(dx, gi_.data(), n * in_, ctx.stream);
    } else if (dx != nullptr) {
      add_into(dx, dy, mid, ctx.stream);
    }
  }

 private:
  void append(const std::vector<std::size_t>& ids) { ids_.insert(ids_.end(), ids.begin(), ids.end()); }
  bool project_;
  std::size_t in_, mid_;  // floats per sample at the block's input and inside it
  std::unique_ptr<DeviceLayer> conv1_, conv2_, shortcut_;
  DeviceBatchNorm bn1_, bn2_;
  std::unique_ptr<DeviceBatchNorm> bn_s_;
  std::vector<std::size_t> ids_;
  DeviceBuffer<float> c1_, r_, c2_, cs_, bs_, ga_, gb_, gi_;
};

}  // namespace

std::unique_ptr<DeviceLayer> make_device_residual_block(const ResidualSpec& spec, std::size_t max_batch,
                                                        DeviceContext& ctx) {
  return std::make_unique<DeviceResidualBlock>(spec, max_batch, ctx);
}

}  // namespace scalelab::gpu
