// Device-memory primitives the benchmark needs for the nccl backend: allocate, free, copy.
// device_memory_cuda.cpp implements them with the CUDA runtime when scalelab is built with CUDA
// (SCALELAB_HAVE_CUDA); device_memory_none.cpp otherwise, where each throws one line saying the
// build has no CUDA. GPU status (bench --backend nccl): ran on one GPU only (docs/gpu-status.md).
#pragma once
#include <cstddef>

namespace scalelab::bench {

enum class CopyKind { host_to_device, device_to_host, device_to_device };

[[nodiscard]] void* device_alloc(std::size_t bytes);  // zero-filled
void device_free(void* p) noexcept;
void device_copy(void* dst, const void* src, std::size_t bytes, CopyKind kind);

}  // namespace scalelab::bench
