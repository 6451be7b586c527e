// The 16-bit precisions' kernels (gpu/precision_kernels.h): grid-stride loops, one thread per
// element; the loss-scale update is one thread.
#include "gpu/precision_kernels.h"

#include "gpu/kernel_launch.cuh"

namespace scalelab::gpu {
namespace {

using kernels::blocks_for;
using kernels::check_launch;
using kernels::from_float;
using kernels::kThreads;
using kernels::to_float;

template <class T>
__global__ void cast_from_float_kernel(const float* x, T* y, std::size_t n, const float* scale) {
  const float s = scale != nullptr ? *scale : 1.0f;
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n;
       i += std::size_t{gridDim.x} * blockDim.x) {
    y[i] = from_float<T>(x[i] * s);
  }
}

template <class T>
__global__ void cast_to_float_kernel(const T* x, float* y, std::size_t n) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n;
       i += std::size_t{gridDim.x} * blockDim.x) {
    y[i] = to_float(x[i]);
  }
}

template <class T>
__global__ void add_to_float_kernel(const T* x, float* y, std::size_t n) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n;
       i += std::size_t{gridDim.x} * blockDim.x) {
    y[i] += to_float(x[i]);
  }
}

// Element i of the KRSC array: i = ((k * rs) + p) * c + ch, from KCRS element (k * c + ch) * rs + p.
template <class T>
__global__ void filter_to_krsc_kernel(const float* kcrs, T* krsc, std::size_t k, std::size_t c, std::size_t rs) {
  const std::size_t n = k * c * rs;
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n;
       i += std::size_t{gridDim.x} * blockDim.x) {
    const std::size_t ch = i % c, p = (i / c) % rs, f = i / (c * rs);
    krsc[i] = from_float<T>(kcrs[(f * c + ch) * rs + p]);
  }
}

template <class T>
__global__ void add_krsc_gradient_kernel(const T* krsc, float* kcrs, std::size_t k, std::size_t c, std::size_t rs) {
  const std::size_t n = k * c * rs;
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n;
       i += std::size_t{gridDim.x} * blockDim.x) {
    const std::size_t ch = i % c, p = (i / c) % rs, f = i / (c * rs);
    kcrs[(f * c + ch) * rs + p] += to_float(krsc[i]);
  }
}

__global__ void unscale_kernel(float* g, std::size_t n, const LossScaleState* state, int* found) {
  const float inv = 1.0f / state->scale;  // a power of two: exact
  bool bad = false;
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n;
       i += std::size_t{gridDim.x} * blockDim.x) {
    const float v = g[i] * inv;
    g[i] = v;
    bad = bad || !isfinite(v);
  }
  if (bad) *found = 1;  // every writer writes the same value
}

__global__ void update_loss_scale_kernel(LossScaleState* s, const int* found, float growth, float backoff,
                                         int interval) {
  if (*found != 0) {
    s->scale *= backoff;
    s->good_steps = 0;
    ++s->skipped;
    return;
  }
  if (++s->good_steps >= interval) {
    s->scale *= growth;
    s->good_steps = 0;
  }
}

}  // namespace

template <class T>
void cast_from_float(const float* x, T* y, std::size_t n, const float* scale, cudaStream_t stream) {
  if (n == 0) return;
  cast_from_float_kernel<T><<<blocks_for(n), kThreads, 0, stream>>>(x, y, n, scale);
  check_launch("cast_from_float");
}

template <class T>
void cast_to_float(const T* x, float* y, std::size_t n, cudaStream_t stream) {
  if (n == 0) return;
  cast_to_float_kernel<T><<<blocks_for(n), kThreads, 0, stream>>>(x, y, n);
  check_launch("cast_to_float");
}

template <class T>
void add_to_float(const T* x, float* y, std::size_t n, cudaStream_t stream) {
  if (n == 0) return;
  add_to_float_kernel<T><<<blocks_for(n), kThreads, 0, stream>>>(x, y, n);
  check_launch("add_to_float");
}

template <class T>
void filter_to_krsc(const float* kcrs, T* krsc, std::size_t k, std::size_t c, std::size_t rs, cudaStream_t stream) {
  const std::size_t n = k * c * rs;
  if (n == 0) return;
  filter_to_krsc_kernel<T><<<blocks_for(n), kThreads, 0, stream>>>(kcrs, krsc, k, c, rs);
  check_launch("filter_to_krsc");
}

template <class T>
void add_krsc_gradient(const T* krsc, float* kcrs, std::size_t k, std::size_t c, std::size_t rs, cudaStream_t stream) {
  const std::size_t n = k * c * rs;
  if (n == 0) return;
  add_krsc_gradient_kernel<T><<<blocks_for(n), kThreads, 0, stream>>>(krsc, kcrs, k, c, rs);
  check_launch("add_krsc_gradient");
}

void launch_unscale(float* g, std::size_t n, const LossScaleState* state, int* found, cudaStream_t stream) {
  if (n == 0) return;
  unscale_kernel<<<blocks_for(n), kThreads, 0, stream>>>(g, n, state, found);
  check_launch("the loss scale's unscale");
}

void launch_update_loss_scale(LossScaleState* state, const int* found, float growth, float backoff, int interval,
                              cudaStream_t stream) {
  update_loss_scale_kernel<<<1, 1, 0, stream>>>(state, found, growth, backoff, interval);
  check_launch("the loss scale's update");
}

#define SCALELAB_PRECISION_KERNELS(T)                                                          \
  template void cast_from_float<T>(const float*, T*, std::size_t, const float*, cudaStream_t); \
  template void cast_to_float<T>(const T*, float*, std::size_t, cudaStream_t);                 \
  template void add_to_float<T>(const T*, float*, std::size_t, cudaStream_t);                 \
  template void filter_to_krsc<T>(const float*, T*, std::size_t, std::size_t, std::size_t, cudaStream_t); \
  template void add_krsc_gradient<T>(const T*, float*, std::size_t, std::size_t, std::size_t, cudaStream_t);
SCALELAB_PRECISION_KERNELS(__nv_bfloat16)
SCALELAB_PRECISION_KERNELS(__half)
#undef SCALELAB_PRECISION_KERNELS
template void cast_from_float<float>(const float*, float*, std::size_t, const float*, cudaStream_t);
template void filter_to_krsc<float>(const float*, float*, std::size_t, std::size_t, std::size_t, cudaStream_t);
template void add_krsc_gradient<float>(const float*, float*, std::size_t, std::size_t, std::size_t, cudaStream_t);

}  // namespace scalelab::gpu
