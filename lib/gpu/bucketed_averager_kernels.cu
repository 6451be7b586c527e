// fp16 wire conversions of the bucketed averager (gpu/bucketed_averager_kernels.h): grid-stride
// elementwise kernels with CUDA's round-to-nearest-even conversions.
#include "gpu/bucketed_averager_kernels.h"

#include <cuda_fp16.h>

#include <algorithm>

namespace scalelab::gpu {
namespace {

constexpr unsigned kThreads = 256;
constexpr std::size_t kMaxBlocks = 4096;

unsigned blocks_for(std::size_t n) {
  return static_cast<unsigned>(std::clamp<std::size_t>((n + kThreads - 1) / kThreads, 1, kMaxBlocks));
}

__global__ void scale_to_half_kernel(const float* src, __half* dst, std::size_t n, float scale) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n; i += std::size_t{gridDim.x} * blockDim.x)
    dst[i] = __float2half_rn(src[i] * scale);
}

__global__ void half_to_float_kernel(const __half* src, float* dst, std::size_t n) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n; i += std::size_t{gridDim.x} * blockDim.x)
    dst[i] = __half2float(src[i]);
}

}  // namespace

cudaError_t launch_scale_to_half(const float* src, void* half, std::size_t n, float scale, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  scale_to_half_kernel<<<blocks_for(n), kThreads, 0, stream>>>(src, static_cast<__half*>(half), n, scale);
  return cudaGetLastError();
}

cudaError_t launch_half_to_float(const void* half, float* dst, std::size_t n, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  half_to_float_kernel<<<blocks_for(n), kThreads, 0, stream>>>(static_cast<const __half*>(half), dst, n);
  return cudaGetLastError();
}

}  // namespace scalelab::gpu
