// gpu_probe.h through the CUDA runtime (and NCCL when built). cudaGetDeviceCount returns an
// error and leaves the count untouched when there is no driver or device: the code is checked
// and its message reported. Compiled only with SCALELAB_HAVE_CUDA.
// GPU status (scalelab info): ran (docs/gpu-status.md).
#include <cuda_runtime.h>
#ifdef SCALELAB_HAVE_NCCL
#include <nccl.h>
#endif

#include <string>

#include "gpu_probe.h"

namespace scalelab::cli {
namespace {

std::string cuda_version_text(int v) { return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10); }

}  // namespace

GpuProbe probe_gpus() {
  GpuProbe p;
  p.cuda_built = true;
  int runtime = 0, driver = 0;
  if (cudaRuntimeGetVersion(&runtime) == cudaSuccess) p.cuda_runtime_version = cuda_version_text(runtime);
  if (cudaDriverGetVersion(&driver) == cudaSuccess && driver > 0) p.cuda_driver_version = cuda_version_text(driver);
#ifdef SCALELAB_HAVE_NCCL
  p.nccl_built = true;
  int nccl = 0;
  if (ncclGetVersion(&nccl) == ncclSuccess) {
    // NCCL >= 2.9 encodes major*10000 + minor*100 + patch.
    p.nccl_version = std::to_string(nccl / 10000) + "." + std::to_string((nccl % 10000) / 100) + "." +
                     std::to_string(nccl % 100);
  }
#endif
  int count = 0;
  const cudaError_t rc = cudaGetDeviceCount(&count);
  if (rc != cudaSuccess) {
    p.no_device_reason = std::string("cudaGetDeviceCount failed: ") + cudaGetErrorString(rc);
    return p;
  }
  if (count == 0) p.no_device_reason = "the CUDA runtime sees no device";
  for (int i = 0; i < count; ++i) {
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, i) != cudaSuccess) continue;
    char bus[32] = {};
    cudaDeviceGetPCIBusId(bus, sizeof bus, i);
    p.devices.push_back({i, prop.name, static_cast<double>(prop.totalGlobalMem) / (1024.0 * 1024.0 * 1024.0),
                         std::to_string(prop.major) + "." + std::to_string(prop.minor), bus});
  }
  return p;
}

}  // namespace scalelab::cli
