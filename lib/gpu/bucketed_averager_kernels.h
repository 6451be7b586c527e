// The two conversions of the averager's fp16 compression (gpu/bucketed_averager.h), as launch
// functions that enqueue on `stream` and return cudaGetLastError(). `half` points to n IEEE
// binary16 values in device memory (the wire buffer).
#pragma once
#include <cuda_runtime.h>

#include <cstddef>

namespace scalelab::gpu {

// half[i] = float16(src[i] * scale), rounded to nearest even (train/gradient_averager.h's rule).
cudaError_t launch_scale_to_half(const float* src, void* half, std::size_t n, float scale, cudaStream_t stream);
// dst[i] = float(half[i]).
cudaError_t launch_half_to_float(const void* half, float* dst, std::size_t n, cudaStream_t stream);

}  // namespace scalelab::gpu
