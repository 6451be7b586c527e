// DeviceModel: a host nn::Model's layers rebuilt on the GPU (gpu/device_layers.h), with the flat
// parameter and gradient buffers in device memory in nn::ParameterSet's layout (same offsets, so
// host <-> device copies are one cudaMemcpy each), every activation and gradient buffer allocated
// once for the largest batch, the cuBLAS and cuDNN handles and the cuDNN workspace, all on one
// compute stream given by the caller; the running statistics (BatchNorm) in a third buffer, copied
// with the values. A model with a layer the GPU has no kernels for is a usage error naming it.
// In bf16 and fp16 (gpu/precision.h) the activations are 16-bit: forward rounds the float32
// weights and the batch to 16 bits first and returns float32 logits; backward takes float32 logit
// gradients (times the loss scale, set_loss_scale) and accumulates float32 parameter gradients.
//
//   gpu::DeviceModel dm(host_model, max_batch, seed, rank, stream);
//   dm.load_values(host_model.parameters());
//   const float* logits = dm.forward(d_images, n, true);
//   dm.backward(d_dlogits, n, on_param_final);   // accumulates into dm.grads()
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "gpu/device_buffer.h"
#include "gpu/device_layers.h"
#include "nn/model.h"

namespace scalelab::gpu {

class DeviceModel {
 public:
  // seed, rng_stream: as given to host.reseed(), so Dropout draws the same keys (and masks).
  DeviceModel(nn::Model& host, std::size_t max_batch, std::uint64_t seed, std::uint64_t rng_stream,
              cudaStream_t stream, Precision precision = Precision::fp32);
  ~DeviceModel();
  DeviceModel(const DeviceModel&) = delete;
  DeviceModel& operator=(const DeviceModel&) = delete;

  [[nodiscard]] float* values() { return values_.data(); }
  [[nodiscard]] float* grads() { return grads_.data(); }
  [[nodiscard]] std::size_t size() const { return size_; }  // floats, as ParameterSet::size()
  [[nodiscard]] std::size_t num_classes() const { return classes_; }
  [[nodiscard]] std::size_t max_batch() const { return max_batch_; }
  [[nodiscard]] const nn::Shape& input_shape() const { return input_shape_; }
  [[nodiscard]] std::size_t workspace_bytes() const { return ctx_.workspace_bytes; }
  [[nodiscard]] cublasHandle_t cublas() const { return ctx_.cublas; }
  [[nodiscard]] Precision precision() const { return ctx_.precision; }
  // fp16: the loss scale (device memory, gpu/loss_scaler.h) backward multiplies the logit gradients
  // by on their way to 16 bits; null: 1.
  void set_loss_scale(const float* device_scale) { loss_scale_ = device_scale; }

  // Synchronous copies of the parameter values and running statistics (and gradients, for tests)
  // to and from the host set.
  void load_values(const nn::ParameterSet& host);
  void store_values(nn::ParameterSet& host);
  void store_grads(nn::ParameterSet& host);
  void zero_grad();  // enqueued
  // SyncBatchNorm (DeviceContext::sync_statistics): every BatchNorm layer exchanges its statistics
  // through `sync` from the next forward on; an empty function turns it off.
  void set_statistics_sync(std::function<void(float* device_sums, std::size_t count)> sync) {
    ctx_.sync_statistics = std::move(sync);
  }
  // Every layer's random stream moved on by `forwards` training forwards (nn::Model::skip_random).
  void skip_random(std::uint64_t forwards);

  // Enqueues every layer's forward on n <= max_batch samples at `input` (device); returns the
  // device logits (n x classes), valid until the next forward.
  const float* forward(const float* input, std::size_t n, bool training);
  // forward() in its two parts, for a captured CUDA graph: the host work (Dropout's keys, written
  // to device memory on the stream), then the enqueued work, which reads only device memory.
  void prepare_forward(bool training);
  const float* enqueue_forward(const float* input, std::size_t n, bool training);
  // Enqueues backward after a training forward; dlogits (device, n x classes) may be overwritten.
  // on_final(param) is called (on the host, in backward order) once each parameter's gradient
  // for this pass has been enqueued, with everything producing it on the stream.
  void backward(float* dlogits, std::size_t n, const std::function<void(std::size_t param)>& on_final);

 private:
  void build(nn::Model& host, std::uint64_t seed, std::uint64_t rng_stream);
  std::size_t max_batch_;
  std::size_t classes_;
  nn::Shape input_shape_;
  std::size_t size_ = 0;
  DeviceContext ctx_;
  DeviceBuffer<float> values_, grads_;
  DeviceBuffer<float> state_;                   // running statistics, ParameterSet::state() layout
  DeviceBuffer<unsigned char> workspace_;          // cuDNN's, shared by the layers
  DeviceBuffer<unsigned char> cublas_workspace_;
  std::vector<std::unique_ptr<DeviceLayer>> layers_;
  std::vector<nn::Shape> out_shapes_;           // per sample, one per layer
  std::vector<std::vector<std::size_t>> layer_params_;  // DeviceLayer::params(), asked once
  // Activations and their gradients, as bytes of the precision's element type.
  std::vector<DeviceBuffer<unsigned char>> acts_;  // output of each non-aliasing layer (else empty)
  std::vector<const void*> outputs_;            // what each layer's output is in the last forward
  DeviceBuffer<unsigned char> grad_buf_[2];     // ping-pong input gradients
  const void* last_input_ = nullptr;
  // bf16 and fp16 only: the 16-bit weights and weight-gradient scratch (DeviceContext), the
  // batch and the logit gradients in 16 bits, the logits in float32.
  DeviceBuffer<unsigned char> half_values_, half_grads_, half_input_, half_dlogits_;
  DeviceBuffer<float> logits_;
  const float* loss_scale_ = nullptr;
  std::size_t first_compute_ = 0;               // the first non-aliasing layer: no input gradient
};

}  // namespace scalelab::gpu
