// What the CUDA engine's kernel files share (included by .cu files only): the block size, the grid
// of an elementwise grid-stride launch, the launch check, conversions of the 16-bit element
// types, and a block's sum of two doubles added
// atomically to two totals.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <string>

#include "gpu/cuda_check.h"

namespace scalelab::gpu::kernels {

inline constexpr int kThreads = 256;  // a power of two: block_add_pair halves it

// Blocks for n elements at one per thread, at most 65535 (the kernels loop over the rest).
inline int blocks_for(std::size_t n) {
  const std::size_t b = (n + kThreads - 1) / kThreads;
  return static_cast<int>(std::min<std::size_t>(std::max<std::size_t>(b, 1), 65535));
}

// One-line runtime error naming the kernel when its launch failed.
inline void check_launch(const char* what) { cuda_check(cudaGetLastError(), std::string("launch of ") + what); }

// An activation element (gpu/precision.h) read as float, and a float rounded to one (to nearest).
__device__ inline float to_float(float v) { return v; }
__device__ inline float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ inline float to_float(__half v) { return __half2float(v); }
template <class T>
__device__ inline T from_float(float v);
template <>
__device__ inline float from_float<float>(float v) { return v; }
template <>
__device__ inline __nv_bfloat16 from_float<__nv_bfloat16>(float v) { return __float2bfloat16_rn(v); }
template <>
__device__ inline __half from_float<__half>(float v) { return __float2half_rn(v); }

// Sums a and b over the block (kThreads threads) with a fixed tree in shared memory; thread 0
// adds the two sums to *out_a and *out_b atomically. Every thread of the block must call it.
__device__ inline void block_add_pair(double a, double b, double* out_a, double* out_b) {
  __shared__ double sa[kThreads], sb[kThreads];
  sa[threadIdx.x] = a;
  sb[threadIdx.x] = b;
  __syncthreads();
  for (unsigned half = blockDim.x / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) {
      sa[threadIdx.x] += sa[threadIdx.x + half];
      sb[threadIdx.x] += sb[threadIdx.x + half];
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    atomicAdd(out_a, sa[0]);
    atomicAdd(out_b, sb[0]);
  }
}

}  // namespace scalelab::gpu::kernels
