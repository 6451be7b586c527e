// The CUDA engine's own kernels (gpu/layer_kernels.h): one thread per element (or per sample for
// the loss), grid-stride loops, launches checked with cudaGetLastError.
#include "gpu/layer_kernels.h"

#include <algorithm>
#include <string>
#include <type_traits>

#include "core/error.h"
#include "gpu/kernel_launch.cuh"

namespace scalelab::gpu {
namespace {

using kernels::blocks_for;
using kernels::check_launch;
using kernels::kThreads;
using kernels::to_float;
using kernels::from_float;

template <class T>
__global__ void bias_activation_kernel(T* y, const T* b, std::size_t total, std::size_t inner, std::size_t channels,
                                       bool relu) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < total;
       i += std::size_t{gridDim.x} * blockDim.x) {
    float v = to_float(y[i]);
    if (b != nullptr) v += to_float(b[(i / inner) % channels]);
    y[i] = from_float<T>(relu ? fmaxf(v, 0.0f) : v);
  }
}

template <class T>
__global__ void relu_backward_kernel(const T* y, const T* dy, T* dz, std::size_t n) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n;
       i += std::size_t{gridDim.x} * blockDim.x) {
    dz[i] = to_float(y[i]) > 0.0f ? dy[i] : from_float<T>(0.0f);
  }
}

// Block (c, s) sums channel c of samples s, s + splits, ... (NCHW: each sample's plane is
// contiguous), reduces in shared memory and adds its partial sum to db[c] (+=: gradients
// accumulate across backward passes). Summation order varies with the schedule: float sums agree
// with the CPU's to rounding, not bit for bit.
template <class T>
__global__ void conv_bias_grad_kernel(const T* dy, float* db, std::size_t n, std::size_t channels, std::size_t hw,
                                      std::size_t splits) {
  __shared__ float partial[kThreads];
  const std::size_t c = blockIdx.x;
  float sum = 0.0f;
  for (std::size_t s = blockIdx.y; s < n; s += splits) {
    const T* plane = dy + (s * channels + c) * hw;
    for (std::size_t i = threadIdx.x; i < hw; i += blockDim.x) sum += to_float(plane[i]);
  }
  partial[threadIdx.x] = sum;
  __syncthreads();
  for (unsigned half = blockDim.x / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) partial[threadIdx.x] += partial[threadIdx.x + half];
    __syncthreads();
  }
  if (threadIdx.x == 0) atomicAdd(db + c, partial[0]);
}

template <class T>
__global__ void maxpool_forward_kernel(const T* x, T* y, std::int32_t* arg, PoolGeometry g) {
  const std::size_t total = std::size_t(g.planes) * g.ho * g.wo;
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < total;
       i += std::size_t{gridDim.x} * blockDim.x) {
    const int ow = static_cast<int>(i % g.wo);
    const int oh = static_cast<int>((i / g.wo) % g.ho);
    const std::size_t plane = i / (std::size_t(g.wo) * g.ho);
    const T* src = x + plane * g.h * g.w;
    int best = (oh * g.stride) * g.w + ow * g.stride;
    float m = to_float(src[best]);
    for (int r = 0; r < g.pool; ++r) {
      for (int c = 0; c < g.pool; ++c) {
        const int at = (oh * g.stride + r) * g.w + ow * g.stride + c;
        const float v = to_float(src[at]);
        if (v > m) {  // strict: ties keep the first maximum
          m = v;
          best = at;
        }
      }
    }
    y[i] = src[best];
    arg[i] = best;
  }
}

// Overlapping windows (stride < pool): each window's gradient added at its maximum (dx zeroed first).
// In 16 bits the sums are float atomics on a float scratch (dx32) converted afterwards; in float,
// dx32 is dx itself.
template <class T>
__global__ void maxpool_backward_scatter_kernel(const T* dy, const T* y, const std::int32_t* arg, float* dx32,
                                                PoolGeometry g, bool input_relu) {
  const std::size_t total = std::size_t(g.planes) * g.ho * g.wo;
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < total;
       i += std::size_t{gridDim.x} * blockDim.x) {
    if (input_relu && !(to_float(y[i]) > 0.0f)) continue;
    const std::size_t plane = i / (std::size_t(g.wo) * g.ho);
    atomicAdd(dx32 + plane * g.h * g.w + arg[i], to_float(dy[i]));
  }
}

// Windows that tile the input exactly (stride == pool, h and w multiples of it), NCHW: one thread
// per window writes its pool x pool inputs (the window's gradient at its maximum, 0 elsewhere).
template <class T>
__global__ void maxpool_backward_window_kernel(const T* dy, const T* y, const std::int32_t* arg, T* dx, PoolGeometry g,
                                               bool input_relu) {
  const unsigned total = unsigned(g.planes) * g.ho * g.wo;
  for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < total; i += gridDim.x * blockDim.x) {
    const unsigned ow = i % g.wo, oh = (i / g.wo) % g.ho, plane = i / (g.wo * g.ho);
    const bool pass = !input_relu || to_float(y[i]) > 0.0f;
    const T v = dy[i], zero = from_float<T>(0.0f);
    const int a = arg[i];
    T* base = dx + std::size_t(plane) * g.h * g.w;
    for (int r = 0; r < g.pool; ++r) {
      for (int c = 0; c < g.pool; ++c) {
        const int at = (int(oh) * g.pool + r) * g.w + int(ow) * g.pool + c;
        base[at] = pass && at == a ? v : zero;
      }
    }
  }
}

// NHWC input, NCHW output (stride == pool, exact tiling): block (oh, n) loads the `pool` input
// rows of its output row, pool * w * channels contiguous elements, into shared memory (coalesced),
// then each thread takes outputs (c, ow) with ow fastest, so the NCHW writes come in runs of wo.
template <class T>
__global__ void maxpool_forward_nhwc_kernel(const T* x, T* y, std::int32_t* arg, PoolGeometry g) {
  extern __shared__ unsigned char tile_bytes[];
  T* tile = reinterpret_cast<T*>(tile_bytes);
  const int oh = blockIdx.x, n = blockIdx.y, C = g.channels;
  const int rows = g.pool * g.w * C;
  const T* src = x + (std::size_t(n) * g.h + std::size_t(oh) * g.pool) * g.w * C;
  for (int i = threadIdx.x; i < rows; i += blockDim.x) tile[i] = src[i];
  __syncthreads();
  for (int t = threadIdx.x; t < C * g.wo; t += blockDim.x) {
    const int ow = t % g.wo, c = t / g.wo;
    int best = 0;  // (r, q) as r * pool + q; the first maximum, row by row, as on the CPU
    float m = to_float(tile[(ow * g.pool) * C + c]);
    for (int r = 0; r < g.pool; ++r) {
      for (int q = 0; q < g.pool; ++q) {
        const float v = to_float(tile[(r * g.w + ow * g.pool + q) * C + c]);
        if (v > m) {
          m = v;
          best = r * g.pool + q;
        }
      }
    }
    const int r = best / g.pool, q = best % g.pool;
    const std::size_t o = ((std::size_t(n) * C + c) * g.ho + oh) * g.wo + ow;
    y[o] = tile[(r * g.w + ow * g.pool + q) * C + c];
    arg[o] = (oh * g.pool + r) * g.w + ow * g.pool + q;  // within the input plane, as the NCHW kernel
  }
}

// Its backward: block (oh, n) zeroes a shared tile of the pool rows, each thread puts its window's
// gradient at the window's maximum, then the tile is written out whole (coalesced NHWC).
template <class T>
__global__ void maxpool_backward_nhwc_kernel(const T* dy, const T* y, const std::int32_t* arg, T* dx, PoolGeometry g,
                                             bool input_relu) {
  extern __shared__ unsigned char tile_bytes[];
  T* tile = reinterpret_cast<T*>(tile_bytes);
  const int oh = blockIdx.x, n = blockIdx.y, C = g.channels;
  const int rows = g.pool * g.w * C;
  for (int i = threadIdx.x; i < rows; i += blockDim.x) tile[i] = from_float<T>(0.0f);
  __syncthreads();
  for (int t = threadIdx.x; t < C * g.wo; t += blockDim.x) {
    const int ow = t % g.wo, c = t / g.wo;
    const std::size_t o = ((std::size_t(n) * C + c) * g.ho + oh) * g.wo + ow;
    if (input_relu && !(to_float(y[o]) > 0.0f)) continue;
    const int at = arg[o];
    const int r = at / g.w - oh * g.pool, col = at % g.w;
    tile[(r * g.w + col) * C + c] = dy[o];
  }
  __syncthreads();
  T* dst = dx + (std::size_t(n) * g.h + std::size_t(oh) * g.pool) * g.w * C;
  for (int i = threadIdx.x; i < rows; i += blockDim.x) dst[i] = tile[i];
}

// Windows that do not overlap (stride >= pool): every input element written once, by a thread of
// its own, with its window's gradient if it is that window's maximum and 0 otherwise. No zeroing
// pass and no atomics.
template <class T>
__global__ void maxpool_backward_gather_kernel(const T* dy, const T* y, const std::int32_t* arg, T* dx, PoolGeometry g,
                                               bool input_relu) {
  const std::size_t total = std::size_t(g.planes) * g.h * g.w;
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < total;
       i += std::size_t{gridDim.x} * blockDim.x) {
    const int at = static_cast<int>(i % (std::size_t(g.h) * g.w));
    const std::size_t plane = i / (std::size_t(g.h) * g.w);
    const int r = at / g.w, c = at % g.w;
    const int oh = r / g.stride, ow = c / g.stride;
    T v = from_float<T>(0.0f);
    if (oh < g.ho && ow < g.wo && r - oh * g.stride < g.pool && c - ow * g.stride < g.pool) {
      const std::size_t o = (plane * g.ho + oh) * g.wo + ow;
      if (arg[o] == at && (!input_relu || to_float(y[o]) > 0.0f)) v = dy[o];
    }
    dx[i] = v;
  }
}

__device__ inline std::uint64_t mix(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

__device__ inline bool keep(std::size_t i, std::uint64_t key, std::uint32_t threshold) {
  const std::uint64_t r = mix(key + 0x9E3779B97F4A7C15ull * (i / 4 + 1));
  return static_cast<std::uint32_t>((r >> (16 * (i % 4))) & 0xFFFFu) >= threshold;
}

template <class T>
__global__ void dropout_kernel(const T* x, T* y, std::size_t n, const std::uint64_t* key_at, std::uint32_t threshold,
                               float scale) {
  const std::uint64_t key = *key_at;
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n;
       i += std::size_t{gridDim.x} * blockDim.x) {
    y[i] = from_float<T>(keep(i, key, threshold) ? to_float(x[i]) * scale : 0.0f);
  }
}

__global__ void store_key_kernel(std::uint64_t* dst, std::uint64_t key) { *dst = key; }

// One thread per sample (classes are few: 10 for the labs); the block sums its losses and
// correct counts in shared memory and adds them to the tally with one atomic each.
__global__ void softmax_xent_kernel(const float* logits, const std::int32_t* labels, std::size_t n,
                                    std::size_t classes, float* dlogits, float g, double* tally,
                                    unsigned long long* bad) {
  const std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x;
  double loss = 0, correct = 0;
  if (i < n) {
    const float* z = logits + i * classes;
    const int y = labels[i];
    std::size_t arg = 0;
    for (std::size_t j = 1; j < classes; ++j) if (z[j] > z[arg]) arg = j;
    const float m = z[arg];
    double sum = 0;
    for (std::size_t j = 0; j < classes; ++j) sum += exp(double(z[j] - m));
    const double log_sum = log(sum);
    if (y < 0 || static_cast<std::size_t>(y) >= classes) {
      atomicAdd(bad, 1ull);
      if (dlogits != nullptr) for (std::size_t j = 0; j < classes; ++j) dlogits[i * classes + j] = 0.0f;
    } else {
      loss = log_sum - double(z[y] - m);
      correct = arg == static_cast<std::size_t>(y) ? 1.0 : 0.0;
      if (dlogits != nullptr) {
        float* d = dlogits + i * classes;
        for (std::size_t j = 0; j < classes; ++j) d[j] = static_cast<float>(exp(double(z[j] - m) - log_sum)) * g;
        d[y] -= g;
      }
    }
  }
  kernels::block_add_pair(loss, correct, tally, tally + 1);
}

__global__ void global_avg_pool_forward_kernel(const float* x, float* y, std::size_t planes, std::size_t plane) {
  for (std::size_t p = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; p < planes;
       p += std::size_t{gridDim.x} * blockDim.x) {
    const float* in = x + p * plane;
    float sum = 0.0f;
    for (std::size_t i = 0; i < plane; ++i) sum += in[i];
    y[p] = sum / static_cast<float>(plane);
  }
}

__global__ void global_avg_pool_backward_kernel(const float* dy, float* dx, std::size_t planes, std::size_t plane) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < planes * plane;
       i += std::size_t{gridDim.x} * blockDim.x) {
    dx[i] = dy[i / plane] / static_cast<float>(plane);
  }
}

__global__ void add_into_kernel(float* y, const float* x, std::size_t n) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n;
       i += std::size_t{gridDim.x} * blockDim.x) {
    y[i] += x[i];
  }
}

}  // namespace

template <class T>
void bias_activation(T* y, const T* b, std::size_t total, std::size_t inner, std::size_t channels, bool relu,
                     cudaStream_t stream) {
  if (total == 0 || (b == nullptr && !relu)) return;
  bias_activation_kernel<T><<<blocks_for(total), kThreads, 0, stream>>>(y, b, total, inner, channels, relu);
  check_launch("bias_activation");
}

template <class T>
void relu_backward(const T* y, const T* dy, T* dz, std::size_t n, cudaStream_t stream) {
  if (n == 0) return;
  relu_backward_kernel<T><<<blocks_for(n), kThreads, 0, stream>>>(y, dy, dz, n);
  check_launch("relu_backward");
}

template <class T>
void conv_bias_grad(const T* dy, float* db, std::size_t n, std::size_t channels, std::size_t hw, cudaStream_t stream) {
  if (n == 0 || channels == 0 || hw == 0) return;
  // About 1024 blocks in all (several per SM on an H100), at most one per sample and channel.
  const std::size_t splits = std::clamp<std::size_t>(1024 / channels, 1, std::min<std::size_t>(n, 65535));
  const dim3 grid(static_cast<unsigned>(channels), static_cast<unsigned>(splits));
  conv_bias_grad_kernel<T><<<grid, kThreads, 0, stream>>>(dy, db, n, channels, hw, splits);
  check_launch("conv_bias_grad");
}

void global_avg_pool_forward(const float* x, float* y, std::size_t planes, std::size_t plane, cudaStream_t stream) {
  global_avg_pool_forward_kernel<<<blocks_for(planes), kThreads, 0, stream>>>(x, y, planes, plane);
  check_launch("global average pooling");
}

void global_avg_pool_backward(const float* dy, float* dx, std::size_t planes, std::size_t plane, cudaStream_t stream) {
  global_avg_pool_backward_kernel<<<blocks_for(planes * plane), kThreads, 0, stream>>>(dy, dx, planes, plane);
  check_launch("global average pooling's backward");
}

void add_into(float* y, const float* x, std::size_t n, cudaStream_t stream) {
  add_into_kernel<<<blocks_for(n), kThreads, 0, stream>>>(y, x, n);
  check_launch("the gradient sum");
}

bool nhwc_pool_fits(int h, int w, int channels, int pool, int stride, std::size_t element_bytes) {
  return pool > 0 && stride == pool && h % pool == 0 && w % pool == 0 &&
         std::size_t(pool) * w * channels * element_bytes <= 48 * 1024;
}

namespace {
dim3 nhwc_pool_grid(const PoolGeometry& g) {
  return dim3(static_cast<unsigned>(g.ho), static_cast<unsigned>(g.planes / g.channels));
}
std::size_t nhwc_tile_bytes(const PoolGeometry& g, std::size_t element) {
  return std::size_t(g.pool) * g.w * g.channels * element;
}
}  // namespace

template <class T>
void maxpool_forward(const T* x, T* y, std::int32_t* arg, const PoolGeometry& g, cudaStream_t stream) {
  const std::size_t total = std::size_t(g.planes) * g.ho * g.wo;
  if (total == 0) return;
  if (g.nhwc_in) {
    maxpool_forward_nhwc_kernel<T><<<nhwc_pool_grid(g), kThreads, nhwc_tile_bytes(g, sizeof(T)), stream>>>(x, y, arg, g);
    check_launch("maxpool_forward (NHWC input)");
    return;
  }
  maxpool_forward_kernel<T><<<blocks_for(total), kThreads, 0, stream>>>(x, y, arg, g);
  check_launch("maxpool_forward");
}

template <class T>
void maxpool_backward(const T* dy, const T* y, const std::int32_t* arg, T* dx, const PoolGeometry& g, bool input_relu,
                      cudaStream_t stream) {
  if (g.nhwc_in) {
    maxpool_backward_nhwc_kernel<T><<<nhwc_pool_grid(g), kThreads, nhwc_tile_bytes(g, sizeof(T)), stream>>>(
        dy, y, arg, dx, g, input_relu);
    check_launch("maxpool_backward (NHWC input)");
    return;
  }
  if (g.stride == g.pool && g.h == g.ho * g.pool && g.w == g.wo * g.pool &&
      std::size_t(g.planes) * g.ho * g.wo < (std::size_t{1} << 31)) {
    const std::size_t total = std::size_t(g.planes) * g.ho * g.wo;
    if (total == 0) return;
    maxpool_backward_window_kernel<T><<<blocks_for(total), kThreads, 0, stream>>>(dy, y, arg, dx, g, input_relu);
    check_launch("maxpool_backward");
    return;
  }
  if (g.stride >= g.pool) {
    const std::size_t total = std::size_t(g.planes) * g.h * g.w;
    if (total == 0) return;
    maxpool_backward_gather_kernel<T><<<blocks_for(total), kThreads, 0, stream>>>(dy, y, arg, dx, g, input_relu);
    check_launch("maxpool_backward");
    return;
  }
  if constexpr (!std::is_same_v<T, float>) {
    // No 16-bit kernel for overlapping windows: no model of the zoo has them.
    throw_runtime("gpu: max-pooling with overlapping windows (stride < pool) runs in float32 only");
  } else {
    const std::size_t total = std::size_t(g.planes) * g.ho * g.wo;
    cuda_check(cudaMemsetAsync(dx, 0, std::size_t(g.planes) * g.h * g.w * sizeof(float), stream),
               "cudaMemsetAsync of the pooling input gradient");
    if (total == 0) return;
    maxpool_backward_scatter_kernel<T><<<blocks_for(total), kThreads, 0, stream>>>(dy, y, arg, dx, g, input_relu);
    check_launch("maxpool_backward");
  }
}

void store_key(std::uint64_t* dst, std::uint64_t key, cudaStream_t stream) {
  store_key_kernel<<<1, 1, 0, stream>>>(dst, key);
  check_launch("store_key");
}

template <class T>
void dropout_forward(const T* x, T* y, std::size_t n, const std::uint64_t* key, std::uint32_t threshold, float scale,
                     cudaStream_t stream) {
  if (n == 0) return;
  dropout_kernel<T><<<blocks_for(n), kThreads, 0, stream>>>(x, y, n, key, threshold, scale);
  check_launch("dropout_forward");
}

template <class T>
void dropout_backward(const T* dy, T* dx, std::size_t n, const std::uint64_t* key, std::uint32_t threshold, float scale,
                      cudaStream_t stream) {
  if (n == 0) return;
  dropout_kernel<T><<<blocks_for(n), kThreads, 0, stream>>>(dy, dx, n, key, threshold, scale);
  check_launch("dropout_backward");
}

void softmax_cross_entropy(const float* logits, const std::int32_t* labels, std::size_t n, std::size_t classes,
                           float* dlogits, float grad_scale, double* tally, unsigned long long* bad,
                           cudaStream_t stream) {
  if (n == 0) return;
  const float g = grad_scale / static_cast<float>(n);
  const auto blocks = static_cast<unsigned>((n + kThreads - 1) / kThreads);
  softmax_xent_kernel<<<blocks, kThreads, 0, stream>>>(logits, labels, n, classes, dlogits, g, tally, bad);
  check_launch("softmax_cross_entropy");
}

#define SCALELAB_LAYER_KERNELS(T)                                                                                      \
  template void bias_activation<T>(T*, const T*, std::size_t, std::size_t, std::size_t, bool, cudaStream_t);           \
  template void relu_backward<T>(const T*, const T*, T*, std::size_t, cudaStream_t);                                  \
  template void conv_bias_grad<T>(const T*, float*, std::size_t, std::size_t, std::size_t, cudaStream_t);             \
  template void maxpool_forward<T>(const T*, T*, std::int32_t*, const PoolGeometry&, cudaStream_t);                   \
  template void maxpool_backward<T>(const T*, const T*, const std::int32_t*, T*, const PoolGeometry&, bool,           \
                                    cudaStream_t);                                                                     \
  template void dropout_forward<T>(const T*, T*, std::size_t, const std::uint64_t*, std::uint32_t, float,             \
                                   cudaStream_t);                                                                      \
  template void dropout_backward<T>(const T*, T*, std::size_t, const std::uint64_t*, std::uint32_t, float,            \
                                    cudaStream_t);
SCALELAB_LAYER_KERNELS(float)
SCALELAB_LAYER_KERNELS(__nv_bfloat16)
SCALELAB_LAYER_KERNELS(__half)
#undef SCALELAB_LAYER_KERNELS

}  // namespace scalelab::gpu
