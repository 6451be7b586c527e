// One-line errors for CUDA, cuBLAS and cuDNN return codes, used by the CUDA engine's layers
// (gpu/device_layers.h, gpu/device_model.h) and train/engine_cuda.cpp:
//   cuda_check(cudaMalloc(&p, bytes), "cudaMalloc of the activations");
// Each failure throws scalelab::Error (runtime) naming the call, the library's error name and
// its description, e.g. "CUDA: cudaMalloc of the activations failed: cudaErrorMemoryAllocation
// (out of memory)".
#pragma once
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include <string>

#include "core/error.h"

namespace scalelab::gpu {

inline void cuda_check(cudaError_t rc, const std::string& what) {
  if (rc != cudaSuccess) {
    throw_runtime("CUDA: " + what + " failed: " + cudaGetErrorName(rc) + " (" + cudaGetErrorString(rc) + ")");
  }
}

inline void cublas_check(cublasStatus_t rc, const std::string& what) {
  if (rc != CUBLAS_STATUS_SUCCESS) {
    throw_runtime("cuBLAS: " + what + " failed: " + cublasGetStatusName(rc) + " (" + cublasGetStatusString(rc) + ")");
  }
}

inline void cudnn_check(cudnnStatus_t rc, const std::string& what) {
  if (rc != CUDNN_STATUS_SUCCESS) throw_runtime("cuDNN: " + what + " failed: " + cudnnGetErrorString(rc));
}

}  // namespace scalelab::gpu
