// The CUDA engine's layers: one DeviceLayer per nn::Layer of a host model (gpu/device_model.h
// builds them from the host layers, with the same per-sample shapes, options and parameter
// offsets into the flat device buffers laid out as nn::ParameterSet):
//   Conv2D      cuDNN (legacy API): algorithms chosen once per layer for the largest batch with
//               cudnnGet*Algorithm_v7, one workspace shared by all layers, bias + ReLU by cuDNN's
//               fused call (else bias and activation by our kernel); a ReLU before a max-pool
//               has its derivative applied by the pool's backward
//   Dense       cuBLAS sgemm (row-major as lib/nn, so column-major transposes), bias by our kernel,
//               the bias gradient as a gemv with a vector of ones
//   MaxPool2D, ReLU, Dropout, GlobalAvgPool  our kernels (gpu/layer_kernels.h); Flatten aliases its input
//   BatchNorm   our kernels (gpu/batch_norm_kernels.h, gpu/device_batch_norm.h), running
//               statistics in DeviceContext::state
//   ResidualBlock  device Conv2D and BatchNorm sublayers with the add and ReLUs fused into
//               BatchNorm's output (gpu/device_residual_block.cpp)
// forward(x, y, n) writes y; backward(x, y, dy, dx, n) ACCUMULATES the parameter gradients, writes
// dx unless it is null (the first layer) and may overwrite dy. Nothing allocates after construction.
// Activations and their gradients are elements of DeviceContext::precision (gpu/precision.h: float,
// or 16 bits in bf16 and fp16, where Conv2D, Dense, MaxPool2D, ReLU, Dropout and Flatten read the
// 16-bit copy of the weights and add their gradients into the float32 ones; the other layers run
// in float32 only).
#pragma once
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/rng.h"
#include "gpu/device_buffer.h"
#include "gpu/precision.h"
#include "nn/tensor.h"

namespace scalelab::gpu {

// What every layer computes with: the compute stream, the library handles bound to it, the
// shared cuDNN workspace, and the flat parameter buffers.
struct DeviceContext {
  Precision precision = Precision::fp32;
  cudaStream_t stream = nullptr;
  cublasHandle_t cublas = nullptr;
  cudnnHandle_t cudnn = nullptr;
  void* workspace = nullptr;
  std::size_t workspace_bytes = 0;
  float* values = nullptr;  // device, nn::ParameterSet layout
  float* grads = nullptr;
  float* state = nullptr;   // device, nn::ParameterSet::state() layout (BatchNorm's running statistics)
  // bf16 and fp16 (null otherwise): the values rounded to 16 bits before each forward, and scratch
  // of the same layout for a layer's 16-bit weight gradient on its way into `grads`.
  void* half_values = nullptr;
  void* half_grads = nullptr;
  // The weights a layer of element type T reads: the float32 values, or their 16-bit copy.
  template <class T>
  [[nodiscard]] const T* weights(std::size_t offset) const {
    if constexpr (sizeof(T) == sizeof(float)) {
      return values + offset;
    } else {
      return static_cast<const T*>(half_values) + offset;
    }
  }
  // SyncBatchNorm: when set, BatchNorm layers hand their packed statistics (device memory, `count`
  // floats; gpu/batch_norm_kernels.h) to it, and it enqueues on `stream` their replacement by the
  // sums over all ranks (an in-place allreduce). Unset: each rank's own batch.
  std::function<void(float* device_sums, std::size_t count)> sync_statistics;
};

class DeviceLayer {
 public:
  virtual ~DeviceLayer() = default;
  [[nodiscard]] virtual std::string type() const = 0;
  [[nodiscard]] virtual bool aliases_input() const { return false; }
  // Indices (nn::ParameterSet) of this layer's parameters, whose gradients are final after backward.
  [[nodiscard]] virtual std::vector<std::size_t> params() const { return {}; }
  // cuDNN workspace this layer needs at any batch up to the largest (after construction).
  [[nodiscard]] virtual std::size_t workspace_bytes() const { return 0; }
  // Host work of a forward that a captured CUDA graph cannot repeat: Dropout draws its key here and
  // writes it to device memory on ctx.stream. Called before each forward (DeviceModel does it);
  // forward() itself only enqueues work that reads device memory, so it can be captured once and
  // replayed after each prepare_forward.
  virtual void prepare_forward(bool /*training*/, DeviceContext& /*ctx*/) {}
  virtual void forward(const void* x, void* y, std::size_t n, bool training, DeviceContext& ctx) = 0;
  virtual void backward(const void* x, const void* y, void* dy, void* dx, std::size_t n, DeviceContext& ctx) = 0;
  // As nn::Layer::skip_random: the stream moved on by `forwards` training forwards.
  virtual void skip_random(std::uint64_t /*forwards*/) {}
};

// Parameter indices and offsets (floats into the flat buffers) of a layer with weights.
struct ParamSlots {
  std::size_t weight = 0, weight_offset = 0;
  bool has_bias = false;
  std::size_t bias = 0, bias_offset = 0;
};

// A BatchNorm layer: per-sample (C) or (C, H, W) input as channels x spatial, nn::BatchNorm's
// constants, its gamma and beta (parameters) and running mean and variance (state offsets).
struct NormSpec {
  std::size_t channels = 0, spatial = 1;
  float momentum = 0.1f, eps = 1e-5f;
  ParamSlots slots;  // weight = gamma, bias = beta
  std::size_t mean_offset = 0, var_offset = 0;
};

struct ConvSpec {
  std::size_t in_c = 0, in_h = 0, in_w = 0, filters = 0, kernel = 0, stride = 1, pad = 0;
  bool relu = false;
  // relu and the next layer is a max-pool that applies the ReLU's derivative to the gradient it
  // hands back: backward skips its own pass over the output for it.
  bool relu_applied_downstream = false;
  // Input and output NHWC (channels innermost), the layout cuDNN's tensor-core kernels work in, so
  // that it converts neither; DeviceModel chooses it in bf16 and fp16 for chains of convolutions
  // that end in a max-pool (gpu/device_model.cpp). The weights stay as lib/nn lays them out.
  bool nhwc = false;
};

// cuDNN chooses the algorithms for max_batch in the constructor (ctx's handle and stream); the
// element type is ctx.precision's.
[[nodiscard]] std::unique_ptr<DeviceLayer> make_device_conv(const ConvSpec& spec, const ParamSlots& slots,
                                                            std::size_t max_batch, DeviceContext& ctx);
// The layers below that take a Precision are built for its element type (gpu/precision.h); the
// others run in float32 only.
[[nodiscard]] std::unique_ptr<DeviceLayer> make_device_dense(std::size_t inputs, std::size_t units, bool relu,
                                                             const ParamSlots& slots, std::size_t max_batch,
                                                             Precision precision);
// input_relu: the input is the output of a Conv2D built with relu_applied_downstream, whose ReLU
// derivative this layer's backward applies (gpu/layer_kernels.h, maxpool_backward), as the host
// model's MaxPool2D does (nn::Model's fusion: MaxPool2D::applies_relu_mask).
// nhwc_in: the input is NHWC (the output is NCHW either way; gpu/layer_kernels.h, nhwc_pool_fits).
[[nodiscard]] std::unique_ptr<DeviceLayer> make_device_maxpool(const nn::Shape& in, std::size_t pool, std::size_t stride,
                                                               bool input_relu, std::size_t max_batch,
                                                               Precision precision, bool nhwc_in = false);
[[nodiscard]] std::unique_ptr<DeviceLayer> make_device_relu(const nn::Shape& in, Precision precision);
// rng: the layer's own stream, as nn::Model::reseed gives nn::Dropout (same keys, same masks).
[[nodiscard]] std::unique_ptr<DeviceLayer> make_device_dropout(const nn::Shape& in, float rate, const Rng& rng,
                                                               Precision precision);
[[nodiscard]] std::unique_ptr<DeviceLayer> make_device_flatten();
[[nodiscard]] std::unique_ptr<DeviceLayer> make_device_global_avg_pool(const nn::Shape& in);
[[nodiscard]] std::unique_ptr<DeviceLayer> make_device_batch_norm(const NormSpec& spec);

// ResNet's basic block (nn::ResidualBlock): conv1 (with the block's stride), bn1 + ReLU, conv2,
// bn2 + shortcut + ReLU, the shortcut being the input or, when `project`, a 1x1 convolution and
// its BatchNorm. The convolutions have no bias and no activation of their own.
struct ResidualSpec {
  ConvSpec conv1, conv2, shortcut;
  ParamSlots conv1_slots, conv2_slots, shortcut_slots;
  NormSpec bn1, bn2, shortcut_bn;
  bool project = false;
};
[[nodiscard]] std::unique_ptr<DeviceLayer> make_device_residual_block(const ResidualSpec& spec, std::size_t max_batch,
                                                                      DeviceContext& ctx);

}  // namespace scalelab::gpu
