// device_memory.h for builds without CUDA: every call is a one-line runtime error.
#include "bench/device_memory.h"

#include "core/error.h"

namespace scalelab::bench {

void* device_alloc(std::size_t /*bytes*/) {
  throw_parameter(ErrorKind::runtime, "backend", "nccl: device memory needs a scalelab built with CUDA; use the mpi backend");
}
void device_free(void* /*p*/) noexcept {}
void device_copy(void* /*dst*/, const void* /*src*/, std::size_t /*bytes*/, CopyKind /*kind*/) {
  throw_parameter(ErrorKind::runtime, "backend", "nccl: device memory needs a scalelab built with CUDA; use the mpi backend");
}

}  // namespace scalelab::bench
