// LossScaler: dynamic loss scaling for fp16 training (gpu/precision.h), as PyTorch's GradScaler
// does it and with its defaults: the loss gradient is multiplied by a scale (2^16 at first) before
// backward, so that small gradients survive half precision's range; after the gradients are
// averaged, they are divided by it and checked. A step with an infinite or NaN gradient is skipped
// (the optimizer's kernels read the flag, gpu/device_optimizer_kernels.h) and halves the scale;
// 2000 steps in a row without one double it. Everything stays on the device (no host wait), so a
// captured CUDA graph of the step repeats it.
//
//   gpu::LossScaler scaler;
//   model.set_loss_scale(scaler.scale());                // read by backward's first cast
//   ... backward, gradients averaged ...
//   scaler.unscale(grads, n, optimizer.skip_flag(), s);  // after the step's scalars were written
//   optimizer.apply(values, grads, s);                   // does nothing when the flag is set
//   scaler.update(optimizer.skip_flag(), s);
//
// One difference from GradScaler: a skipped step still counts in the optimizer's step count (Adam's
// bias corrections), which the host keeps without waiting for the device.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "gpu/device_buffer.h"
#include "gpu/precision_kernels.h"

namespace scalelab::gpu {

class LossScaler {
 public:
  static constexpr float kInitialScale = 65536.0f, kGrowth = 2.0f, kBackoff = 0.5f;
  static constexpr int kGrowthInterval = 2000;

  // Allocates and sets the state (synchronously).
  explicit LossScaler(float initial_scale = kInitialScale, int growth_interval = kGrowthInterval);

  // Device memory holding the current scale (a float), for the first cast of backward.
  [[nodiscard]] const float* scale() const { return &state_.data()->scale; }
  // Enqueued: grads (n floats, device) divided by the scale, *found set when one is not finite.
  void unscale(float* grads, std::size_t n, int* found, cudaStream_t stream);
  // Enqueued after the optimizer: the scale's backoff or growth, the skipped count.
  void update(const int* found, cudaStream_t stream);
  // Read back after `stream`'s work so far (synchronises it).
  [[nodiscard]] LossScaleState read(cudaStream_t stream) const;

 private:
  int interval_;
  DeviceBuffer<LossScaleState> state_;
};

}  // namespace scalelab::gpu
