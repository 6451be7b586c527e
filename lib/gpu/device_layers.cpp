// Dense (cuBLAS), MaxPool2D, ReLU, Dropout, GlobalAvgPool and Flatten on the GPU (see gpu/device_layers.h).
// cuBLAS is column-major and lib/nn row-major: a row-major (r x c) matrix is a column-major
// (c x r) one, so Y = X W^T (n x u) is computed as Y^T = W X^T, and so on for the gradients.
#include <cmath>
#include <string>

#include "gpu/cuda_check.h"
#include "gpu/device_layers.h"
#include "gpu/layer_kernels.h"

namespace scalelab::gpu {
namespace {

class DeviceDense final : public DeviceLayer {
 public:
  DeviceDense(std::size_t inputs, std::size_t units, bool relu, const ParamSlots& slots, std::size_t max_batch)
      : k_(static_cast<int>(inputs)), u_(static_cast<int>(units)), relu_(relu), slots_(slots),
        ones_(max_batch, "the Dense layer's bias-gradient ones") {
    std::vector<float> ones(max_batch, 1.0f);
    cuda_check(cudaMemcpy(ones_.data(), ones.data(), max_batch * sizeof(float), cudaMemcpyHostToDevice),
               "cudaMemcpy of the Dense layer's ones");
    // From pageable memory cudaMemcpy may return before the DMA lands; readers use other streams.
    cuda_check(cudaDeviceSynchronize(), "cudaDeviceSynchronize after the Dense layer's ones");
  }
  [[nodiscard]] std::string type() const override { return "Dense"; }
  [[nodiscard]] std::vector<std::size_t> params() const override { return {slots_.weight, slots_.bias}; }

  void forward(const float* x, float* y, std::size_t n, bool /*training*/, DeviceContext& ctx) override {
    const float one = 1.0f, zero = 0.0f;
    const int b = static_cast<int>(n);
    // Y^T (u x n) = W (u x k) X^T (k x n); W is column-major (k x u), X column-major (k x n).
    cublas_check(cublasSgemm(ctx.cublas, CUBLAS_OP_T, CUBLAS_OP_N, u_, b, k_, &one, ctx.values + slots_.weight_offset,
                             k_, x, k_, &zero, y, u_),
                 "cublasSgemm (Dense forward)");
    bias_activation(y, ctx.values + slots_.bias_offset, n * static_cast<std::size_t>(u_), 1,
                    static_cast<std::size_t>(u_), relu_, ctx.stream);
  }

  void backward(const float* x, const float* y, float* dy, float* dx, std::size_t n, DeviceContext& ctx) override {
    const float one = 1.0f, zero = 0.0f;
    const int b = static_cast<int>(n);
    if (relu_) relu_backward(y, dy, dy, n * static_cast<std::size_t>(u_), ctx.stream);
    // db += dZ^T 1: dZ is column-major (u x n).
    cublas_check(cublasSgemv(ctx.cublas, CUBLAS_OP_N, u_, b, &one, dy, u_, ones_.data(), 1, &one,
                             ctx.grads + slots_.bias_offset, 1),
                 "cublasSgemv (Dense bias gradient)");
    // dW (u x k) += dZ^T X, i.e. column-major dW^T (k x u) += X^T (k x n) dZ (n x u).
    cublas_check(cublasSgemm(ctx.cublas, CUBLAS_OP_N, CUBLAS_OP_T, k_, u_, b, &one, x, k_, dy, u_, &one,
                             ctx.grads + slots_.weight_offset, k_),
                 "cublasSgemm (Dense weight gradient)");
    if (dx == nullptr) return;
    // dX (n x k) = dZ W, i.e. column-major dX^T (k x n) = W^T (k x u) dZ^T (u x n).
    cublas_check(cublasSgemm(ctx.cublas, CUBLAS_OP_N, CUBLAS_OP_N, k_, b, u_, &one, ctx.values + slots_.weight_offset,
                             k_, dy, u_, &zero, dx, k_),
                 "cublasSgemm (Dense input gradient)");
  }

 private:
  int k_, u_;
  bool relu_;
  ParamSlots slots_;
  DeviceBuffer<float> ones_;
};

class DeviceMaxPool final : public DeviceLayer {
 public:
  DeviceMaxPool(const nn::Shape& in, std::size_t pool, std::size_t stride, std::size_t max_batch, bool input_relu)
      : input_relu_(input_relu), c_(in[0]), pool_(pool), stride_(stride), h_(in[1]), w_(in[2]),
        ho_((in[1] - pool) / stride + 1), wo_((in[2] - pool) / stride + 1),
        arg_(max_batch * in[0] * ((in[1] - pool) / stride + 1) * ((in[2] - pool) / stride + 1),
             "the MaxPooling2D argmax") {}
  [[nodiscard]] std::string type() const override { return "MaxPooling2D"; }
  void forward(const float* x, float* y, std::size_t n, bool /*training*/, DeviceContext& ctx) override {
    maxpool_forward(x, y, arg_.data(), geometry(n), ctx.stream);
  }
  void backward(const float* /*x*/, const float* y, float* dy, float* dx, std::size_t n, DeviceContext& ctx) override {
    if (dx != nullptr) maxpool_backward(dy, y, arg_.data(), dx, geometry(n), input_relu_, ctx.stream);
  }

 private:
  [[nodiscard]] PoolGeometry geometry(std::size_t n) const {
    return {static_cast<int>(n * c_), static_cast<int>(h_), static_cast<int>(w_), static_cast<int>(pool_),
            static_cast<int>(stride_), static_cast<int>(ho_), static_cast<int>(wo_)};
  }
  bool input_relu_;  // the input's ReLU derivative is applied here (gpu/layer_kernels.h)
  std::size_t c_, pool_, stride_, h_, w_, ho_, wo_;
  DeviceBuffer<std::int32_t> arg_;
};

class DeviceRelu final : public DeviceLayer {
 public:
  explicit DeviceRelu(const nn::Shape& in) : per_sample_(in.numel()) {}
  [[nodiscard]] std::string type() const override { return "ReLU"; }
  void forward(const float* x, float* y, std::size_t n, bool /*training*/, DeviceContext& ctx) override {
    const std::size_t total = n * per_sample_;
    cuda_check(cudaMemcpyAsync(y, x, total * sizeof(float), cudaMemcpyDeviceToDevice, ctx.stream),
               "cudaMemcpyAsync (ReLU input)");
    bias_activation(y, nullptr, total, 1, 1, true, ctx.stream);
  }
  void backward(const float* /*x*/, const float* y, float* dy, float* dx, std::size_t n, DeviceContext& ctx) override {
    if (dx != nullptr) relu_backward(y, dy, dx, n * per_sample_, ctx.stream);
  }

 private:
  std::size_t per_sample_;
};

class DeviceDropout final : public DeviceLayer {
 public:
  DeviceDropout(const nn::Shape& in, float rate, const Rng& rng)
      : per_sample_(in.numel()), rate_(rate), rng_(rng),
        threshold_(static_cast<std::uint32_t>(std::lround(double(rate) * 65536.0))), scale_(1.0f / (1.0f - rate)),
        key_(1, "the Dropout key") {}
  [[nodiscard]] std::string type() const override { return "Dropout"; }
  void skip_random(std::uint64_t forwards) override { rng_.engine().discard(forwards); }
  void prepare_forward(bool training, DeviceContext& ctx) override {
    last_training_ = training && rate_ > 0.0f;
    // One key per training forward, as nn::Dropout draws it.
    if (last_training_) store_key(key_.data(), rng_.next_u64(), ctx.stream);
  }
  void forward(const float* x, float* y, std::size_t n, bool /*training*/, DeviceContext& ctx) override {
    const std::size_t total = n * per_sample_;
    if (!last_training_) {
      cuda_check(cudaMemcpyAsync(y, x, total * sizeof(float), cudaMemcpyDeviceToDevice, ctx.stream),
                 "cudaMemcpyAsync (Dropout in evaluation)");
      return;
    }
    dropout_forward(x, y, total, key_.data(), threshold_, scale_, ctx.stream);
  }
  void backward(const float* /*x*/, const float* /*y*/, float* dy, float* dx, std::size_t n, DeviceContext& ctx) override {
    if (dx == nullptr) return;
    const std::size_t total = n * per_sample_;
    if (!last_training_) {
      cuda_check(cudaMemcpyAsync(dx, dy, total * sizeof(float), cudaMemcpyDeviceToDevice, ctx.stream),
                 "cudaMemcpyAsync (Dropout gradient)");
      return;
    }
    dropout_backward(dy, dx, total, key_.data(), threshold_, scale_, ctx.stream);
  }

 private:
  std::size_t per_sample_;
  float rate_;
  Rng rng_;
  std::uint32_t threshold_;
  float scale_;
  DeviceBuffer<std::uint64_t> key_;  // this forward's, written by prepare_forward
  bool last_training_ = false;
};

class DeviceGlobalAvgPool final : public DeviceLayer {
 public:
  explicit DeviceGlobalAvgPool(const nn::Shape& in) : channels_(in[0]), plane_(in[1] * in[2]) {}
  [[nodiscard]] std::string type() const override { return "GlobalAveragePooling2D"; }
  void forward(const float* x, float* y, std::size_t n, bool /*training*/, DeviceContext& ctx) override {
    global_avg_pool_forward(x, y, n * channels_, plane_, ctx.stream);
  }
  void backward(const float* /*x*/, const float* /*y*/, float* dy, float* dx, std::size_t n, DeviceContext& ctx) override {
    if (dx != nullptr) global_avg_pool_backward(dy, dx, n * channels_, plane_, ctx.stream);
  }

 private:
  std::size_t channels_, plane_;
};

class DeviceFlatten final : public DeviceLayer {
 public:
  [[nodiscard]] std::string type() const override { return "Flatten"; }
  [[nodiscard]] bool aliases_input() const override { return true; }
  void forward(const float* /*x*/, float* /*y*/, std::size_t /*n*/, bool /*training*/, DeviceContext& /*ctx*/) override {}
  void backward(const float* /*x*/, const float* /*y*/, float* /*dy*/, float* /*dx*/, std::size_t /*n*/,
                DeviceContext& /*ctx*/) override {}
};

}  // namespace

std::unique_ptr<DeviceLayer> make_device_dense(std::size_t inputs, std::size_t units, bool relu, const ParamSlots& slots,
                                               std::size_t max_batch) {
  return std::make_unique<DeviceDense>(inputs, units, relu, slots, max_batch);
}
std::unique_ptr<DeviceLayer> make_device_maxpool(const nn::Shape& in, std::size_t pool, std::size_t stride, bool input_relu,
                                                 std::size_t max_batch) {
  return std::make_unique<DeviceMaxPool>(in, pool, stride, max_batch, input_relu);
}
std::unique_ptr<DeviceLayer> make_device_relu(const nn::Shape& in) { return std::make_unique<DeviceRelu>(in); }
std::unique_ptr<DeviceLayer> make_device_dropout(const nn::Shape& in, float rate, const Rng& rng) {
  return std::make_unique<DeviceDropout>(in, rate, rng);
}
std::unique_ptr<DeviceLayer> make_device_flatten() { return std::make_unique<DeviceFlatten>(); }
std::unique_ptr<DeviceLayer> make_device_global_avg_pool(const nn::Shape& in) {
  return std::make_unique<DeviceGlobalAvgPool>(in);
}

}  // namespace scalelab::gpu
