// Why a GPU test skips: empty when the CUDA runtime sees a usable device, else the CUDA error
// (cudaErrorInsufficientDriver on machines without a driver) or "no device". Every GPU test
// skips with "no usable CUDA device: <this>".
#pragma once
#include <cuda_runtime.h>

#include <string>

namespace scalelab::gpu::test_support {

inline std::string no_device_reason() {
  int count = 0;
  const cudaError_t rc = cudaGetDeviceCount(&count);
  if (rc != cudaSuccess) return std::string(cudaGetErrorName(rc)) + ": " + cudaGetErrorString(rc);
  return count == 0 ? "the CUDA runtime sees no device" : "";
}

}  // namespace scalelab::gpu::test_support
