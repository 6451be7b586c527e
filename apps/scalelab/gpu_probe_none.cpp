// gpu_probe.h for builds without CUDA.
#include "gpu_probe.h"

namespace scalelab::cli {

GpuProbe probe_gpus() {
  GpuProbe p;
  p.no_device_reason = "this scalelab was built without CUDA (no CUDA compiler at configure time)";
  return p;
}

}  // namespace scalelab::cli
