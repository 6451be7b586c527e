// device_memory.h with the CUDA runtime (built only when SCALELAB_HAVE_CUDA). The nccl
// communicator has already selected this rank's device.
// GPU status (bench --backend nccl): ran on one GPU only (docs/gpu-status.md).
#include <cuda_runtime.h>

#include <string>

#include "bench/device_memory.h"
#include "core/error.h"

namespace scalelab::bench {
namespace {

void check(cudaError_t rc, const char* what) {
  if (rc != cudaSuccess) throw_runtime(std::string("bench: ") + what + " failed: " + cudaGetErrorString(rc));
}

}  // namespace

void* device_alloc(std::size_t bytes) {
  void* p = nullptr;
  if (bytes == 0) return nullptr;
  check(cudaMalloc(&p, bytes), "cudaMalloc");
  check(cudaMemset(p, 0, bytes), "cudaMemset");
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  return p;
}

void device_free(void* p) noexcept {
  if (p != nullptr) cudaFree(p);
}

void device_copy(void* dst, const void* src, std::size_t bytes, CopyKind kind) {
  if (bytes == 0) return;
  const cudaMemcpyKind k = kind == CopyKind::host_to_device   ? cudaMemcpyHostToDevice
                           : kind == CopyKind::device_to_host ? cudaMemcpyDeviceToHost
                                                              : cudaMemcpyDeviceToDevice;
  check(cudaMemcpy(dst, src, bytes, k), "cudaMemcpy");
}

}  // namespace scalelab::bench
