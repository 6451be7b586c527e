// BatchNorm on the GPU as a building block: the standalone layer (make_device_batch_norm) and the
// residual block's three (gpu/device_residual_block.cpp) each hold one. nn::BatchNorm's semantics
// (nn/batch_norm.h): training normalises with the batch's mean and biased variance and moves the
// running statistics (in DeviceContext::state); evaluation uses the running statistics. The
// normalised input is not kept: backward recomputes it from the input and the forward's mean and
// inverse deviation. The statistics are this rank's batch's, or with DeviceContext::sync_statistics
// set (SyncBatchNorm) the global batch's, exchanged as nn::BatchNorm's reducer exchanges them:
// forward [sum x, sum x^2, count] (2C+1 floats), backward [sum dy, sum dy*xhat] (2C floats), the
// parameter gradients staying the local sums. In a residual block the exchanges come in the order
// bn1, shortcut_bn, bn2 (the CPU block's: bn1, bn2, shortcut_bn), the same on every rank.
//
//   DeviceBatchNorm bn(spec);
//   bn.forward(x, y, n, training, ctx);                  // optionally y = relu(bn(x) + residual)
//   bn.backward(x, dy, dx, n, ctx);                      // accumulates dgamma, dbeta; dx may be null
#pragma once
#include <cstddef>
#include <vector>

#include "gpu/device_buffer.h"
#include "gpu/device_layers.h"

namespace scalelab::gpu {

class DeviceBatchNorm {
 public:
  explicit DeviceBatchNorm(const NormSpec& spec);
  [[nodiscard]] std::vector<std::size_t> params() const { return {spec_.slots.weight, spec_.slots.bias}; }
  // y = bn(x), then + residual (when not null), then ReLU (when relu); y may not alias x.
  void forward(const float* x, float* y, std::size_t n, bool training, DeviceContext& ctx,
               const float* residual = nullptr, bool relu = false);
  // dy: the gradient at bn(x)'s output (after any ReLU mask and residual split). Needs the input
  // of the last forward, which must have been on the same n.
  void backward(const float* x, const float* dy, float* dx, std::size_t n, DeviceContext& ctx);

 private:
  NormSpec spec_;
  DeviceBuffer<double> sums_;        // 2C: forward's sum x, sum x^2, then backward's sum dy, sum dy*xhat
  DeviceBuffer<float> mean_, inv_std_;  // C each, of the last forward
  DeviceBuffer<float> reduced_;      // 2C+1: the exchanged sums; [2C] keeps the forward's global count
  bool last_training_ = false;
  bool last_synced_ = false;         // the last forward exchanged its statistics
};

}  // namespace scalelab::gpu
