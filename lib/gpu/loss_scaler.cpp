// LossScaler (gpu/loss_scaler.h): the state in device memory, the kernels of gpu/precision_kernels.h.
#include "gpu/loss_scaler.h"

#include "core/error.h"
#include "gpu/cuda_check.h"

namespace scalelab::gpu {

LossScaler::LossScaler(float initial_scale, int growth_interval)
    : interval_(growth_interval), state_(1, "the loss scale") {
  if (!(initial_scale > 0) || growth_interval < 1) throw_runtime("gpu: a loss scale needs a positive scale and interval");
  LossScaleState s;
  s.scale = initial_scale;
  cuda_check(cudaMemcpy(state_.data(), &s, sizeof s, cudaMemcpyHostToDevice), "cudaMemcpy of the loss scale");
}

void LossScaler::unscale(float* grads, std::size_t n, int* found, cudaStream_t stream) {
  launch_unscale(grads, n, state_.data(), found, stream);
}

void LossScaler::update(const int* found, cudaStream_t stream) {
  launch_update_loss_scale(state_.data(), found, kGrowth, kBackoff, interval_, stream);
}

LossScaleState LossScaler::read(cudaStream_t stream) const {
  LossScaleState s;
  cuda_check(cudaStreamSynchronize(stream), "cudaStreamSynchronize before reading the loss scale");
  cuda_check(cudaMemcpy(&s, state_.data(), sizeof s, cudaMemcpyDeviceToHost), "cudaMemcpy of the loss scale");
  return s;
}

}  // namespace scalelab::gpu
