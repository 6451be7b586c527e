// Dense (cuBLAS), MaxPool2D, ReLU, Dropout, GlobalAvgPool and Flatten on the GPU (see gpu/device_layers.h).
// cuBLAS is column-major and lib/nn row-major: a row-major (r x c) matrix is a column-major
// (c x r) one, so Y = X W^T (n x u) is computed as Y^T = W X^T, and so on for the gradients.
// Dense, MaxPool2D, ReLU, Dropout and Flatten take the activation element type T (gpu/precision.h);
// in 16 bits Dense's products are cublasGemmEx calls on 16-bit operands accumulating in float32,
// its weight and bias gradients written straight into the float32 gradients.
#include <cmath>
#include <string>
#include <vector>

#include "gpu/cuda_check.h"
#include "gpu/device_layers.h"
#include "gpu/layer_kernels.h"

namespace scalelab::gpu {
namespace {

// C (m x n, column-major, type ctype) = alpha op(A) op(B) + beta C with 16-bit A and B (type ab),
// accumulated in float32.
void gemm_ex(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k, const void* a, int lda,
             const void* b, int ldb, float beta, void* c, cudaDataType_t ctype, int ldc, cudaDataType_t ab,
             const char* what) {
  const float one = 1.0f;
  cublas_check(cublasGemmEx(h, ta, tb, m, n, k, &one, a, ab, lda, b, ab, ldb, &beta, c, ctype, ldc, CUBLAS_COMPUTE_32F,
                            CUBLAS_GEMM_DEFAULT),
               what);
}

template <class T>
class DeviceDense final : public DeviceLayer {
 public:
  DeviceDense(std::size_t inputs, std::size_t units, bool relu, const ParamSlots& slots, std::size_t max_batch,
              Precision precision)
      : k_(static_cast<int>(inputs)), u_(static_cast<int>(units)), relu_(relu), slots_(slots),
        type_(cuda_type(precision)), ones_(max_batch, "the Dense layer's bias-gradient ones") {
    std::vector<T> ones(max_batch, T(1.0f));
    cuda_check(cudaMemcpy(ones_.data(), ones.data(), max_batch * sizeof(T), cudaMemcpyHostToDevice),
               "cudaMemcpy of the Dense layer's ones");
    // From pageable memory cudaMemcpy may return before the DMA lands; readers use other streams.
    cuda_check(cudaDeviceSynchronize(), "cudaDeviceSynchronize after the Dense layer's ones");
  }
  [[nodiscard]] std::string type() const override { return "Dense"; }
  [[nodiscard]] std::vector<std::size_t> params() const override { return {slots_.weight, slots_.bias}; }

  void forward(const void* xv, void* yv, std::size_t n, bool /*training*/, DeviceContext& ctx) override {
    const auto* x = static_cast<const T*>(xv);
    auto* y = static_cast<T*>(yv);
    const int b = static_cast<int>(n);
    const T* w = ctx.weights<T>(slots_.weight_offset);
    // Y^T (u x n) = W (u x k) X^T (k x n); W is column-major (k x u), X column-major (k x n).
    if constexpr (sizeof(T) == sizeof(float)) {
      const float one = 1.0f, zero = 0.0f;
      cublas_check(cublasSgemm(ctx.cublas, CUBLAS_OP_T, CUBLAS_OP_N, u_, b, k_, &one, w, k_, x, k_, &zero, y, u_),
                   "cublasSgemm (Dense forward)");
    } else {
      gemm_ex(ctx.cublas, CUBLAS_OP_T, CUBLAS_OP_N, u_, b, k_, w, k_, x, k_, 0.0f, y, type_, u_, type_,
              "cublasGemmEx (Dense forward)");
    }
    bias_activation(y, ctx.weights<T>(slots_.bias_offset), n * static_cast<std::size_t>(u_), 1,
                    static_cast<std::size_t>(u_), relu_, ctx.stream);
  }

  void backward(const void* xv, const void* yv, void* dyv, void* dxv, std::size_t n, DeviceContext& ctx) override {
    const auto* x = static_cast<const T*>(xv);
    auto* dy = static_cast<T*>(dyv);
    const int b = static_cast<int>(n);
    const T* w = ctx.weights<T>(slots_.weight_offset);
    if (relu_) relu_backward(static_cast<const T*>(yv), dy, dy, n * static_cast<std::size_t>(u_), ctx.stream);
    if constexpr (sizeof(T) == sizeof(float)) {
      const float one = 1.0f, zero = 0.0f;
      // db += dZ^T 1: dZ is column-major (u x n).
      cublas_check(cublasSgemv(ctx.cublas, CUBLAS_OP_N, u_, b, &one, dy, u_, ones_.data(), 1, &one,
                               ctx.grads + slots_.bias_offset, 1),
                   "cublasSgemv (Dense bias gradient)");
      // dW (u x k) += dZ^T X, i.e. column-major dW^T (k x u) += X^T (k x n) dZ (n x u).
      cublas_check(cublasSgemm(ctx.cublas, CUBLAS_OP_N, CUBLAS_OP_T, k_, u_, b, &one, x, k_, dy, u_, &one,
                               ctx.grads + slots_.weight_offset, k_),
                   "cublasSgemm (Dense weight gradient)");
      if (dxv == nullptr) return;
      // dX (n x k) = dZ W, i.e. column-major dX^T (k x n) = W^T (k x u) dZ^T (u x n).
      cublas_check(cublasSgemm(ctx.cublas, CUBLAS_OP_N, CUBLAS_OP_N, k_, b, u_, &one, w, k_, dy, u_, &zero,
                               static_cast<float*>(dxv), k_),
                   "cublasSgemm (Dense input gradient)");
    } else {
      // The same products, 16-bit operands; the gradients of the parameters accumulate in float32.
      gemm_ex(ctx.cublas, CUBLAS_OP_N, CUBLAS_OP_N, u_, 1, b, dy, u_, ones_.data(), b, 1.0f,
              ctx.grads + slots_.bias_offset, CUDA_R_32F, u_, type_, "cublasGemmEx (Dense bias gradient)");
      gemm_ex(ctx.cublas, CUBLAS_OP_N, CUBLAS_OP_T, k_, u_, b, x, k_, dy, u_, 1.0f, ctx.grads + slots_.weight_offset,
              CUDA_R_32F, k_, type_, "cublasGemmEx (Dense weight gradient)");
      if (dxv == nullptr) return;
      gemm_ex(ctx.cublas, CUBLAS_OP_N, CUBLAS_OP_N, k_, b, u_, w, k_, dy, u_, 0.0f, dxv, type_, k_, type_,
              "cublasGemmEx (Dense input gradient)");
    }
  }

 private:
  int k_, u_;
  bool relu_;
  ParamSlots slots_;
  cudaDataType_t type_;  // T's
  DeviceBuffer<T> ones_;
};

template <class T>
class DeviceMaxPool final : public DeviceLayer {
 public:
  DeviceMaxPool(const nn::Shape& in, std::size_t pool, std::size_t stride, std::size_t max_batch, bool input_relu,
                bool nhwc_in)
      : input_relu_(input_relu), nhwc_in_(nhwc_in), c_(in[0]), pool_(pool), stride_(stride), h_(in[1]), w_(in[2]),
        ho_((in[1] - pool) / stride + 1), wo_((in[2] - pool) / stride + 1),
        arg_(max_batch * in[0] * ((in[1] - pool) / stride + 1) * ((in[2] - pool) / stride + 1),
             "the MaxPooling2D argmax") {}
  [[nodiscard]] std::string type() const override { return "MaxPooling2D"; }
  void forward(const void* x, void* y, std::size_t n, bool /*training*/, DeviceContext& ctx) override {
    maxpool_forward(static_cast<const T*>(x), static_cast<T*>(y), arg_.data(), geometry(n), ctx.stream);
  }
  void backward(const void* /*x*/, const void* y, void* dy, void* dx, std::size_t n, DeviceContext& ctx) override {
    if (dx != nullptr) {
      maxpool_backward(static_cast<const T*>(dy), static_cast<const T*>(y), arg_.data(), static_cast<T*>(dx),
                       geometry(n), input_relu_, ctx.stream);
    }
  }

 private:
  [[nodiscard]] PoolGeometry geometry(std::size_t n) const {
    return {static_cast<int>(n * c_), static_cast<int>(h_), static_cast<int>(w_), static_cast<int>(pool_),
            static_cast<int>(stride_), static_cast<int>(ho_), static_cast<int>(wo_), nhwc_in_, static_cast<int>(c_)};
  }
  bool input_relu_;  // the input's ReLU derivative is applied here (gpu/layer_kernels.h)
  bool nhwc_in_;
  std::size_t c_, pool_, stride_, h_, w_, ho_, wo_;
  DeviceBuffer<std::int32_t> arg_;
};

template <class T>
class DeviceRelu final : public DeviceLayer {
 public:
  explicit DeviceRelu(const nn::Shape& in) : per_sample_(in.numel()) {}
  [[nodiscard]] std::string type() const override { return "ReLU"; }
  void forward(const void* x, void* y, std::size_t n, bool /*training*/, DeviceContext& ctx) override {
    const std::size_t total = n * per_sample_;
    cuda_check(cudaMemcpyAsync(y, x, total * sizeof(T), cudaMemcpyDeviceToDevice, ctx.stream),
               "cudaMemcpyAsync (ReLU input)");
    bias_activation(static_cast<T*>(y), static_cast<const T*>(nullptr), total, 1, 1, true, ctx.stream);
  }
  void backward(const void* /*x*/, const void* y, void* dy, void* dx, std::size_t n, DeviceContext& ctx) override {
    if (dx != nullptr) {
      relu_backward(static_cast<const T*>(y), static_cast<const T*>(dy), static_cast<T*>(dx), n * per_sample_,
                    ctx.stream);
    }
  }

 private:
  std::size_t per_sample_;
};

template <class T>
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
  void forward(const void* x, void* y, std::size_t n, bool /*training*/, DeviceContext& ctx) override {
    const std::size_t total = n * per_sample_;
    if (!last_training_) {
      cuda_check(cudaMemcpyAsync(y, x, total * sizeof(T), cudaMemcpyDeviceToDevice, ctx.stream),
                 "cudaMemcpyAsync (Dropout in evaluation)");
      return;
    }
    dropout_forward(static_cast<const T*>(x), static_cast<T*>(y), total, key_.data(), threshold_, scale_, ctx.stream);
  }
  void backward(const void* /*x*/, const void* /*y*/, void* dy, void* dx, std::size_t n, DeviceContext& ctx) override {
    if (dx == nullptr) return;
    const std::size_t total = n * per_sample_;
    if (!last_training_) {
      cuda_check(cudaMemcpyAsync(dx, dy, total * sizeof(T), cudaMemcpyDeviceToDevice, ctx.stream),
                 "cudaMemcpyAsync (Dropout gradient)");
      return;
    }
    dropout_backward(static_cast<const T*>(dy), static_cast<T*>(dx), total, key_.data(), threshold_, scale_,
                     ctx.stream);
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
  // float32 only (DeviceModel refuses it in bf16 and fp16).
  void forward(const void* x, void* y, std::size_t n, bool /*training*/, DeviceContext& ctx) override {
    global_avg_pool_forward(static_cast<const float*>(x), static_cast<float*>(y), n * channels_, plane_, ctx.stream);
  }
  void backward(const void* /*x*/, const void* /*y*/, void* dy, void* dx, std::size_t n, DeviceContext& ctx) override {
    if (dx != nullptr) {
      global_avg_pool_backward(static_cast<const float*>(dy), static_cast<float*>(dx), n * channels_, plane_,
                               ctx.stream);
    }
  }

 private:
  std::size_t channels_, plane_;
};

class DeviceFlatten final : public DeviceLayer {
 public:
  [[nodiscard]] std::string type() const override { return "Flatten"; }
  [[nodiscard]] bool aliases_input() const override { return true; }
  void forward(const void* /*x*/, void* /*y*/, std::size_t /*n*/, bool /*training*/, DeviceContext& /*ctx*/) override {}
  void backward(const void* /*x*/, const void* /*y*/, void* /*dy*/, void* /*dx*/, std::size_t /*n*/,
                DeviceContext& /*ctx*/) override {}
};

}  // namespace

std::unique_ptr<DeviceLayer> make_device_dense(std::size_t inputs, std::size_t units, bool relu, const ParamSlots& slots,
                                               std::size_t max_batch, Precision precision) {
  return with_element(precision, [&](auto zero) -> std::unique_ptr<DeviceLayer> {
    return std::make_unique<DeviceDense<decltype(zero)>>(inputs, units, relu, slots, max_batch, precision);
  });
}
std::unique_ptr<DeviceLayer> make_device_maxpool(const nn::Shape& in, std::size_t pool, std::size_t stride, bool input_relu,
                                                 std::size_t max_batch, Precision precision, bool nhwc_in) {
  return with_element(precision, [&](auto zero) -> std::unique_ptr<DeviceLayer> {
    return std::make_unique<DeviceMaxPool<decltype(zero)>>(in, pool, stride, max_batch, input_relu, nhwc_in);
  });
}
std::unique_ptr<DeviceLayer> make_device_relu(const nn::Shape& in, Precision precision) {
  return with_element(precision, [&](auto zero) -> std::unique_ptr<DeviceLayer> {
    return std::make_unique<DeviceRelu<decltype(zero)>>(in);
  });
}
std::unique_ptr<DeviceLayer> make_device_dropout(const nn::Shape& in, float rate, const Rng& rng, Precision precision) {
  return with_element(precision, [&](auto zero) -> std::unique_ptr<DeviceLayer> {
    return std::make_unique<DeviceDropout<decltype(zero)>>(in, rate, rng);
  });
}
std::unique_ptr<DeviceLayer> make_device_flatten() { return std::make_unique<DeviceFlatten>(); }
std::unique_ptr<DeviceLayer> make_device_global_avg_pool(const nn::Shape& in) {
  return std::make_unique<DeviceGlobalAvgPool>(in);
}

}  // namespace scalelab::gpu
