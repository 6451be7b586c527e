// Conv2D on the GPU with cuDNN's legacy convolution API (see gpu/device_layers.h).
// Forward: with a bias and a ReLU, cudnnConvolutionBiasActivationForward (cuDNN applies both);
// otherwise cudnnConvolutionForward, then bias and activation in one kernel of ours. Backward: the
// ReLU mask (in place on dy; left to a following max-pool that applies it,
// ConvSpec::relu_applied_downstream), the bias gradient (our kernel, gpu/layer_kernels.h: faster
// than cudnnConvolutionBackwardBias) and BackwardFilter with beta = 1 (gradients accumulate),
// BackwardData unless this is the first layer. The algorithms are chosen once for the largest
// batch (cudnnGet*Algorithm_v7: cuDNN's heuristics, fastest first, within a workspace cap; cuDNN's
// measured choice, cudnnFind*Algorithm, was slower in the training step, docs/performance.md); a
// smaller batch (the test set's last one) re-describes the tensors and falls back to the
// workspace-free algorithms if the chosen ones would need more workspace than was allocated.
// Math: CUDNN_DEFAULT_MATH, which lets cuDNN use TF32 tensor cores on A100/H100 (PyTorch's default
// for convolutions too). In bf16 and fp16 (gpu/precision.h) the tensors and weights are 16-bit and
// the convolution accumulates in float32 on tensor cores (cuDNN's PSEUDO_HALF and PSEUDO_BFLOAT16
// configurations, CUDNN_TENSOR_OP_MATH); the weight gradient goes to 16-bit scratch and is added
// into the float32 gradients, the bias gradient is summed in float32 from the 16-bit output
// gradient. Should cuDNN refuse the fused bias + ReLU call for a 16-bit configuration, the layer
// falls back to the separate passes for good (at the first, uncaptured, forward). On an H200 the
// fused call ran in bf16 with NCHW tensors (no bias pass among the kernels ncu timed); whether it
// runs with NHWC tensors, or this fallback took over there, was not observed.
#include <algorithm>
#include <string>
#include <vector>

#include "gpu/cuda_check.h"
#include "gpu/device_layers.h"
#include "gpu/layer_kernels.h"
#include "gpu/precision_kernels.h"

namespace scalelab::gpu {
namespace {

constexpr std::size_t kWorkspaceCap = std::size_t{512} << 20;  // per algorithm

template <class T>
class DeviceConv final : public DeviceLayer {
 public:
  DeviceConv(const ConvSpec& s, const ParamSlots& slots, std::size_t max_batch, DeviceContext& ctx)
      : s_(s), slots_(slots), type_(cudnn_type(ctx.precision)), fused_(s.relu && slots.has_bias),
        format_(s.nhwc ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW) {
    try {
      cudnn_check(cudnnCreateTensorDescriptor(&x_), "cudnnCreateTensorDescriptor");
      cudnn_check(cudnnCreateTensorDescriptor(&y_), "cudnnCreateTensorDescriptor");
      cudnn_check(cudnnCreateFilterDescriptor(&w_), "cudnnCreateFilterDescriptor");
      cudnn_check(cudnnCreateConvolutionDescriptor(&conv_), "cudnnCreateConvolutionDescriptor");
      if (fused_epilogue()) {
        cudnn_check(cudnnCreateTensorDescriptor(&b_), "cudnnCreateTensorDescriptor");
        cudnn_check(cudnnSetTensor4dDescriptor(b_, CUDNN_TENSOR_NCHW, type_, 1, static_cast<int>(s.filters), 1, 1),
                    "cudnnSetTensor4dDescriptor (Conv2D bias)");
        cudnn_check(cudnnCreateActivationDescriptor(&act_), "cudnnCreateActivationDescriptor");
        cudnn_check(cudnnSetActivationDescriptor(act_, CUDNN_ACTIVATION_RELU, CUDNN_NOT_PROPAGATE_NAN, 0.0),
                    "cudnnSetActivationDescriptor (ReLU)");
      }
      const int k = static_cast<int>(s.kernel), pad = static_cast<int>(s.pad), stride = static_cast<int>(s.stride);
      // NHWC takes the filter as (K, R, S, C) too (cuDNN refuses NHWC tensors with a KCRS filter
      // for the data gradient): the layer keeps its own copy in that order (weights_for_forward).
      cudnn_check(cudnnSetFilter4dDescriptor(w_, type_, format_, static_cast<int>(s.filters),
                                             static_cast<int>(s.in_c), k, k),
                  "cudnnSetFilter4dDescriptor (Conv2D weights)");
      cudnn_check(cudnnSetConvolution2dDescriptor(conv_, pad, pad, stride, stride, 1, 1, CUDNN_CROSS_CORRELATION,
                                                  CUDNN_DATA_FLOAT),
                  "cudnnSetConvolution2dDescriptor");
      cudnn_check(cudnnSetConvolutionMathType(conv_, half_storage(ctx.precision) ? CUDNN_TENSOR_OP_MATH : CUDNN_DEFAULT_MATH),
                  "cudnnSetConvolutionMathType");
      out_h_ = (s.in_h + 2 * s.pad - s.kernel) / s.stride + 1;
      out_w_ = (s.in_w + 2 * s.pad - s.kernel) / s.stride + 1;
      describe(max_batch);
      choose_algorithms(ctx.cudnn);
      if (s.nhwc) {
        krsc_.resize(weight_count(), "the NHWC convolution's filter");
        krsc_grad_.resize(weight_count(), "the NHWC convolution's filter gradient");
      }
      if (s.nhwc && slots.has_bias) {
        // NHWC's bias gradient: db += dY^T 1 over the n * Ho * Wo rows of channels (cuBLAS).
        ones_.resize(max_batch * out_h_ * out_w_, "the NHWC convolution's bias-gradient ones");
        std::vector<T> ones(max_batch * out_h_ * out_w_, T(1.0f));
        cuda_check(cudaMemcpy(ones_.data(), ones.data(), ones.size() * sizeof(T), cudaMemcpyHostToDevice),
                   "cudaMemcpy of the convolution's ones");
      }
    } catch (...) {
      destroy();  // a descriptor call that failed half-way must not leak the others
      throw;
    }
  }
  ~DeviceConv() override { destroy(); }
  DeviceConv(const DeviceConv&) = delete;
  DeviceConv& operator=(const DeviceConv&) = delete;

  [[nodiscard]] std::string type() const override { return "Conv2D"; }
  [[nodiscard]] std::vector<std::size_t> params() const override {
    if (slots_.has_bias) return {slots_.weight, slots_.bias};
    return {slots_.weight};
  }
  [[nodiscard]] std::size_t workspace_bytes() const override { return workspace_; }

  void forward(const void* x, void* yv, std::size_t n, bool /*training*/, DeviceContext& ctx) override {
    prepare(n, ctx);
    auto* y = static_cast<T*>(yv);
    const float one = 1.0f, zero = 0.0f;
    const T* w = weights_for_forward(ctx);
    if (fused_) {
      // y = ReLU(conv(x) + alpha2 * z + b) with z = y and alpha2 = 0: y's previous contents (the
      // last forward's ReLU outputs, or DeviceModel's zeroed allocation) add nothing.
      const cudnnStatus_t rc = cudnnConvolutionBiasActivationForward(
          ctx.cudnn, &one, x_, x, w_, w, conv_, fwd_, ctx.workspace, ctx.workspace_bytes, &zero, y_, y, b_,
          ctx.weights<T>(slots_.bias_offset), act_, y_, y);
      // A 16-bit configuration cuDNN has no fused kernel for (NOT_SUPPORTED, or BAD_PARAM for the
      // bias's type): the separate passes from now on. In float32 the fused call is known to run.
      const bool refused = rc == CUDNN_STATUS_NOT_SUPPORTED || rc == CUDNN_STATUS_BAD_PARAM;
      if (!refused || sizeof(T) == sizeof(float)) {
        cudnn_check(rc, "cudnnConvolutionBiasActivationForward");
        return;
      }
      fused_ = false;
    }
    cudnn_check(cudnnConvolutionForward(ctx.cudnn, &one, x_, x, w_, w, conv_, fwd_, ctx.workspace, ctx.workspace_bytes,
                                        &zero, y_, y),
                "cudnnConvolutionForward");
    // NCHW: channel (i / (Ho * Wo)) % C; NHWC: i % C.
    bias_activation(y, slots_.has_bias ? ctx.weights<T>(slots_.bias_offset) : nullptr, n * s_.filters * out_h_ * out_w_,
                    s_.nhwc ? 1 : out_h_ * out_w_, s_.filters, s_.relu, ctx.stream);
  }

  void backward(const void* x, const void* yv, void* dyv, void* dx, std::size_t n, DeviceContext& ctx) override {
    prepare(n, ctx);
    auto* dy = static_cast<T*>(dyv);
    if (s_.relu && !s_.relu_applied_downstream) {
      relu_backward(static_cast<const T*>(yv), dy, dy, n * s_.filters * out_h_ * out_w_, ctx.stream);
    }
    const float one = 1.0f, zero = 0.0f;
    if (slots_.has_bias && !s_.nhwc) {
      conv_bias_grad(dy, ctx.grads + slots_.bias_offset, n, s_.filters, out_h_ * out_w_, ctx.stream);
    } else if (slots_.has_bias) {
      const float beta = 1.0f;
      const int rows = static_cast<int>(n * out_h_ * out_w_), c = static_cast<int>(s_.filters);
      // Column-major dY^T is (C x rows), times the ones (rows x 1), into the float32 bias gradient.
      cublas_check(cublasGemmEx(ctx.cublas, CUBLAS_OP_N, CUBLAS_OP_N, c, 1, rows, &one, dy, cuda_type(ctx.precision), c,
                                ones_.data(), cuda_type(ctx.precision), rows, &beta, ctx.grads + slots_.bias_offset,
                                CUDA_R_32F, c, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
                   "cublasGemmEx (NHWC convolution bias gradient)");
    }
    if (s_.nhwc) {
      cudnn_check(cudnnConvolutionBackwardFilter(ctx.cudnn, &one, x_, x, y_, dy, conv_, bwd_filter_, ctx.workspace,
                                                 ctx.workspace_bytes, &zero, w_, krsc_grad_.data()),
                  "cudnnConvolutionBackwardFilter");
      add_krsc_gradient(krsc_grad_.data(), ctx.grads + slots_.weight_offset, s_.filters, s_.in_c, s_.kernel * s_.kernel,
                        ctx.stream);
    } else if constexpr (sizeof(T) == sizeof(float)) {
      cudnn_check(cudnnConvolutionBackwardFilter(ctx.cudnn, &one, x_, x, y_, dy, conv_, bwd_filter_, ctx.workspace,
                                                 ctx.workspace_bytes, &one, w_, ctx.grads + slots_.weight_offset),
                  "cudnnConvolutionBackwardFilter");
    } else {
      // The filter gradient has the filter's type: 16 bits, written to scratch, added into float32.
      T* scratch = static_cast<T*>(ctx.half_grads) + slots_.weight_offset;
      cudnn_check(cudnnConvolutionBackwardFilter(ctx.cudnn, &one, x_, x, y_, dy, conv_, bwd_filter_, ctx.workspace,
                                                 ctx.workspace_bytes, &zero, w_, scratch),
                  "cudnnConvolutionBackwardFilter");
      add_to_float(scratch, ctx.grads + slots_.weight_offset, weight_count(), ctx.stream);
    }
    if (dx == nullptr) return;
    const T* w = s_.nhwc ? krsc_.data() : ctx.weights<T>(slots_.weight_offset);  // the forward's
    cudnn_check(cudnnConvolutionBackwardData(ctx.cudnn, &one, w_, w, y_, dy, conv_,
                                             bwd_data_, ctx.workspace, ctx.workspace_bytes, &zero, x_, dx),
                "cudnnConvolutionBackwardData");
  }

 private:
  void destroy() noexcept {
    if (x_ != nullptr) (void)cudnnDestroyTensorDescriptor(x_);
    if (y_ != nullptr) (void)cudnnDestroyTensorDescriptor(y_);
    if (w_ != nullptr) (void)cudnnDestroyFilterDescriptor(w_);
    if (conv_ != nullptr) (void)cudnnDestroyConvolutionDescriptor(conv_);
    if (b_ != nullptr) (void)cudnnDestroyTensorDescriptor(b_);
    if (act_ != nullptr) (void)cudnnDestroyActivationDescriptor(act_);
  }
  // Bias and ReLU in cuDNN's fused call (cudnnConvolutionBiasActivationForward) rather than a pass
  // of our own over the output: 8% more images/sec for cnn at batch 1024 on an H200
  // (docs/performance.md). Its activation is ReLU only, so other convolutions keep our kernel.
  [[nodiscard]] bool fused_epilogue() const { return s_.relu && slots_.has_bias; }
  [[nodiscard]] std::size_t weight_count() const { return s_.filters * s_.in_c * s_.kernel * s_.kernel; }
  // The filter this step's forward and backward read: lib/nn's (K, C, R, S) weights, or for NHWC
  // their (K, R, S, C) copy, made here from the float32 values (enqueued, so a graph repeats it).
  const T* weights_for_forward(const DeviceContext& ctx) {
    if (!s_.nhwc) return ctx.weights<T>(slots_.weight_offset);
    filter_to_krsc(ctx.values + slots_.weight_offset, krsc_.data(), s_.filters, s_.in_c, s_.kernel * s_.kernel,
                   ctx.stream);
    return krsc_.data();
  }
  void describe(std::size_t n) {
    cudnn_check(cudnnSetTensor4dDescriptor(x_, format_, type_, static_cast<int>(n),
                                           static_cast<int>(s_.in_c), static_cast<int>(s_.in_h), static_cast<int>(s_.in_w)),
                "cudnnSetTensor4dDescriptor (Conv2D input)");
    cudnn_check(cudnnSetTensor4dDescriptor(y_, format_, type_, static_cast<int>(n),
                                           static_cast<int>(s_.filters), static_cast<int>(out_h_), static_cast<int>(out_w_)),
                "cudnnSetTensor4dDescriptor (Conv2D output)");
    batch_ = n;
  }

  // The fastest algorithm of cuDNN's list that ran and fits the cap; `fallback` when none does.
  template <typename Perf, typename Algo>
  static Algo first_usable(const Perf* perf, int got, Algo fallback) {
    for (int i = 0; i < got; ++i) {
      if (perf[i].status == CUDNN_STATUS_SUCCESS && perf[i].memory <= kWorkspaceCap) return perf[i].algo;
    }
    return fallback;
  }

  void choose_algorithms(cudnnHandle_t h) {
    int got = 0;
    cudnnConvolutionFwdAlgoPerf_t fwd[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
    cudnn_check(cudnnGetConvolutionForwardAlgorithm_v7(h, x_, w_, conv_, y_, CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &got, fwd),
                "cudnnGetConvolutionForwardAlgorithm_v7");
    fwd_ = first_usable(fwd, got, CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM);
    cudnnConvolutionBwdFilterAlgoPerf_t bf[CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT];
    cudnn_check(cudnnGetConvolutionBackwardFilterAlgorithm_v7(h, x_, y_, conv_, w_, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT,
                                                              &got, bf),
                "cudnnGetConvolutionBackwardFilterAlgorithm_v7");
    bwd_filter_ = first_usable(bf, got, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_0);
    cudnnConvolutionBwdDataAlgoPerf_t bd[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
    cudnn_check(cudnnGetConvolutionBackwardDataAlgorithm_v7(h, w_, y_, conv_, x_, CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT,
                                                            &got, bd),
                "cudnnGetConvolutionBackwardDataAlgorithm_v7");
    bwd_data_ = first_usable(bd, got, CUDNN_CONVOLUTION_BWD_DATA_ALGO_0);
    best_fwd_ = fwd_;
    best_filter_ = bwd_filter_;
    best_data_ = bwd_data_;
    workspace_ = needed(h);
  }

  // The workspace the chosen algorithms need at the described batch.
  [[nodiscard]] std::size_t needed(cudnnHandle_t h) const {
    std::size_t a = 0, b = 0, c = 0;
    cudnn_check(cudnnGetConvolutionForwardWorkspaceSize(h, x_, w_, conv_, y_, fwd_, &a),
                "cudnnGetConvolutionForwardWorkspaceSize");
    cudnn_check(cudnnGetConvolutionBackwardFilterWorkspaceSize(h, x_, y_, conv_, w_, bwd_filter_, &b),
                "cudnnGetConvolutionBackwardFilterWorkspaceSize");
    cudnn_check(cudnnGetConvolutionBackwardDataWorkspaceSize(h, w_, y_, conv_, x_, bwd_data_, &c),
                "cudnnGetConvolutionBackwardDataWorkspaceSize");
    return std::max(a, std::max(b, c));
  }

  // Re-describes the tensors for a batch of n (host-side only; nothing when n is unchanged).
  void prepare(std::size_t n, const DeviceContext& ctx) {
    if (n == batch_) return;
    describe(n);
    fwd_ = best_fwd_;
    bwd_filter_ = best_filter_;
    bwd_data_ = best_data_;
    if (needed(ctx.cudnn) > ctx.workspace_bytes) {
      fwd_ = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
      bwd_filter_ = CUDNN_CONVOLUTION_BWD_FILTER_ALGO_0;
      bwd_data_ = CUDNN_CONVOLUTION_BWD_DATA_ALGO_0;
      if (needed(ctx.cudnn) > ctx.workspace_bytes)
        throw_runtime("cuDNN: Conv2D at batch " + std::to_string(n) + " needs more workspace than was allocated");
    }
  }

  ConvSpec s_;
  ParamSlots slots_;
  cudnnDataType_t type_;  // of the tensors and the filter (the convolution accumulates in float)
  bool fused_;            // fused_epilogue() and cuDNN has it for this configuration
  cudnnTensorFormat_t format_;  // of the input and output tensors (ConvSpec::nhwc)
  DeviceBuffer<T> ones_;  // NHWC with a bias: the bias gradient's ones
  DeviceBuffer<T> krsc_, krsc_grad_;  // NHWC: the filter and its gradient as (K, R, S, C)
  std::size_t out_h_ = 0, out_w_ = 0, batch_ = 0, workspace_ = 0;
  cudnnTensorDescriptor_t x_ = nullptr, y_ = nullptr;
  cudnnFilterDescriptor_t w_ = nullptr;
  cudnnConvolutionDescriptor_t conv_ = nullptr;
  cudnnTensorDescriptor_t b_ = nullptr;          // fused_epilogue() only
  cudnnActivationDescriptor_t act_ = nullptr;
  cudnnConvolutionFwdAlgo_t fwd_{};
  cudnnConvolutionBwdFilterAlgo_t bwd_filter_{};
  cudnnConvolutionBwdDataAlgo_t bwd_data_{};
  cudnnConvolutionFwdAlgo_t best_fwd_{};  // chosen for the largest batch
  cudnnConvolutionBwdFilterAlgo_t best_filter_{};
  cudnnConvolutionBwdDataAlgo_t best_data_{};
};

}  // namespace

std::unique_ptr<DeviceLayer> make_device_conv(const ConvSpec& spec, const ParamSlots& slots, std::size_t max_batch,
                                              DeviceContext& ctx) {
  return with_element(ctx.precision, [&](auto zero) -> std::unique_ptr<DeviceLayer> {
    return std::make_unique<DeviceConv<decltype(zero)>>(spec, slots, max_batch, ctx);
  });
}

}  // namespace scalelab::gpu
