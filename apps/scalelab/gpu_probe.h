// What `scalelab info` learns about GPUs: the CUDA runtime and driver versions, NCCL's version,
// and the devices found, or the reason none were. gpu_probe_cuda.cpp asks the CUDA runtime (built
// only when CUDA was found at configure time, SCALELAB_HAVE_CUDA); gpu_probe_none.cpp says the
// build has no GPU code.
#pragma once
#include <string>
#include <vector>

namespace scalelab::cli {

struct GpuDevice {
  int index = 0;
  std::string name;
  double memory_gib = 0;
  std::string compute_capability;  // "9.0"
  std::string pci_bus_id;
};

struct GpuProbe {
  bool cuda_built = false;
  bool nccl_built = false;
  std::string cuda_runtime_version;  // "13.0"
  std::string cuda_driver_version;   // "" when no driver
  std::string nccl_version;          // "2.28.3"
  std::vector<GpuDevice> devices;
  std::string no_device_reason;      // why devices is empty
};

[[nodiscard]] GpuProbe probe_gpus();

}  // namespace scalelab::cli
