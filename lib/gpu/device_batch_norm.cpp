// DeviceBatchNorm (gpu/device_batch_norm.h) and the standalone BatchNorm layer built on it.
#include "gpu/device_batch_norm.h"

#include <memory>
#include <string>

#include "gpu/batch_norm_kernels.h"
#include "gpu/cuda_check.h"

namespace scalelab::gpu {

DeviceBatchNorm::DeviceBatchNorm(const NormSpec& spec)
    : spec_(spec), sums_(2 * spec.channels, "the BatchNorm sums"), mean_(spec.channels, "the BatchNorm means"),
      inv_std_(spec.channels, "the BatchNorm deviations"), reduced_(2 * spec.channels + 1, "the BatchNorm exchanged sums") {}

void DeviceBatchNorm::forward(const float* x, float* y, std::size_t n, bool training, DeviceContext& ctx,
                              const float* residual, bool relu) {
  const BnShape s{n, spec_.channels, spec_.spatial};
  float* running_mean = ctx.state + spec_.mean_offset;
  float* running_var = ctx.state + spec_.var_offset;
  const std::size_t c = spec_.channels;
  last_training_ = training;
  last_synced_ = training && ctx.sync_statistics;
  if (training) {
    cuda_check(cudaMemsetAsync(sums_.data(), 0, 2 * c * sizeof(double), ctx.stream),
               "cudaMemsetAsync of the BatchNorm sums");
    bn_channel_sums(x, s, sums_.data(), ctx.stream);
    if (last_synced_) {
      bn_pack_sums(sums_.data(), c, double(n * spec_.spatial), true, reduced_.data(), ctx.stream);
      ctx.sync_statistics(reduced_.data(), 2 * c + 1);
      bn_batch_statistics_reduced(reduced_.data(), c, spec_.momentum, spec_.eps, running_mean, running_var,
                                  mean_.data(), inv_std_.data(), ctx.stream);
    } else {
      bn_batch_statistics(sums_.data(), double(n * spec_.spatial), c, spec_.momentum, spec_.eps, running_mean,
                          running_var, mean_.data(), inv_std_.data(), ctx.stream);
    }
  } else {
    bn_running_statistics(running_mean, running_var, spec_.channels, spec_.eps, mean_.data(), inv_std_.data(),
                          ctx.stream);
  }
  bn_apply(x, y, mean_.data(), inv_std_.data(), ctx.values + spec_.slots.weight_offset,
           ctx.values + spec_.slots.bias_offset, residual, relu, s, ctx.stream);
}

void DeviceBatchNorm::backward(const float* x, const float* dy, float* dx, std::size_t n, DeviceContext& ctx) {
  const BnShape s{n, spec_.channels, spec_.spatial};
  cuda_check(cudaMemsetAsync(sums_.data(), 0, 2 * spec_.channels * sizeof(double), ctx.stream),
             "cudaMemsetAsync of the BatchNorm gradient sums");
  bn_gradient_sums(dy, x, mean_.data(), inv_std_.data(), s, sums_.data(), ctx.stream);
  bn_parameter_gradients(sums_.data(), spec_.channels, ctx.grads + spec_.slots.weight_offset,
                         ctx.grads + spec_.slots.bias_offset, ctx.stream);
  if (dx == nullptr) return;
  const float* gamma = ctx.values + spec_.slots.weight_offset;
  if (last_synced_) {
    const std::size_t c = spec_.channels;
    bn_pack_sums(sums_.data(), c, 0.0, false, reduced_.data(), ctx.stream);  // [2C], the count, stays
    ctx.sync_statistics(reduced_.data(), 2 * c);
    bn_input_gradient_reduced(dy, x, mean_.data(), inv_std_.data(), gamma, reduced_.data(), reduced_.data() + 2 * c, s,
                              dx, ctx.stream);
    return;
  }
  bn_input_gradient(dy, x, mean_.data(), inv_std_.data(), gamma, sums_.data(), double(n * spec_.spatial),
                    last_training_, s, dx, ctx.stream);
}

namespace {

class DeviceBatchNormLayer final : public DeviceLayer {
 public:
  explicit DeviceBatchNormLayer(const NormSpec& spec) : bn_(spec) {}
  [[nodiscard]] std::string type() const override { return "BatchNormalization"; }
  [[nodiscard]] std::vector<std::size_t> params() const override { return bn_.params(); }
  // float32 only (DeviceModel refuses it in bf16 and fp16).
  void forward(const void* x, void* y, std::size_t n, bool training, DeviceContext& ctx) override {
    bn_.forward(static_cast<const float*>(x), static_cast<float*>(y), n, training, ctx);
  }
  void backward(const void* x, const void* /*y*/, void* dy, void* dx, std::size_t n, DeviceContext& ctx) override {
    bn_.backward(static_cast<const float*>(x), static_cast<float*>(dy), static_cast<float*>(dx), n, ctx);
  }

 private:
  DeviceBatchNorm bn_;
};

}  // namespace

std::unique_ptr<DeviceLayer> make_device_batch_norm(const NormSpec& spec) {
  return std::make_unique<DeviceBatchNormLayer>(spec);
}

}  // namespace scalelab::gpu
