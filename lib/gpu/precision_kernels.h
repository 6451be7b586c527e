// Kernels of the 16-bit precisions (gpu/precision.h): casts at the model's edges and of the master
// weights, 16-bit gradients added into float32 ones, and dynamic loss scaling (gpu/loss_scaler.h).
// Each enqueues on `stream`, checks the launch (one-line runtime error) and never synchronises. T
// is __nv_bfloat16 or __half (float too, for the casts).
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace scalelab::gpu {

// y[i] = x[i] * (*scale) rounded to T; scale (device memory) may be null: 1.
template <class T>
void cast_from_float(const float* x, T* y, std::size_t n, const float* scale, cudaStream_t stream);
// y[i] = float(x[i]).
template <class T>
void cast_to_float(const T* x, float* y, std::size_t n, cudaStream_t stream);
// y[i] += float(x[i]) (a layer's 16-bit weight gradient into the float32 gradients).
template <class T>
void add_to_float(const T* x, float* y, std::size_t n, cudaStream_t stream);

// An NHWC convolution's filter (gpu/device_layers.h, ConvSpec::nhwc) in cuDNN's NHWC filter layout
// (K, R, S, C), from lib/nn's (K, C, R, S) float32 weights, rounded to T; and its weight gradient
// back, ADDED into the float32 gradients in lib/nn's layout. rs = R * S.
template <class T>
void filter_to_krsc(const float* kcrs, T* krsc, std::size_t k, std::size_t c, std::size_t rs, cudaStream_t stream);
template <class T>
void add_krsc_gradient(const T* krsc, float* kcrs, std::size_t k, std::size_t c, std::size_t rs, cudaStream_t stream);

// Dynamic loss scaling's device state: the scale the loss gradient is multiplied by, the steps
// since it last changed without an overflow, and the steps skipped so far.
struct LossScaleState {
  float scale = 65536.0f;
  int good_steps = 0;
  unsigned long long skipped = 0;
};
// g[i] /= state->scale over n floats; *found = 1 when any result is not finite (left as it is
// otherwise: the step's scalars set it to 0 first).
void launch_unscale(float* g, std::size_t n, const LossScaleState* state, int* found, cudaStream_t stream);
// After the optimizer: an overflow (*found) halves the scale (backoff) and counts a skipped step;
// `interval` steps in a row without one double it (growth).
void launch_update_loss_scale(LossScaleState* state, const int* found, float growth, float backoff, int interval,
                              cudaStream_t stream);

}  // namespace scalelab::gpu
