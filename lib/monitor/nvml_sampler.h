// The NVML implementation of GpuSampler (sampler.h): reads this node's GPUs through the driver's
// management library, libnvidia-ml.so.1, loaded with dlopen so scalelab builds and runs without
// it (no GPU, no driver: a clear error only when monitoring is asked for). Set
// SCALELAB_NVML_LIBRARY to load another file (a path or a soname) instead.
#pragma once
#include <memory>
#include <string>

#include "monitor/sampler.h"

namespace scalelab::monitor {

// The library dlopen looks for: $SCALELAB_NVML_LIBRARY if set and not empty, else libnvidia-ml.so.1.
[[nodiscard]] std::string nvml_library_name();

// Loads NVML, initialises it and lists the GPUs. Throws scalelab::Error (runtime) with one line:
// "NVML not found (libnvidia-ml.so.1): install the NVIDIA driver; GPU monitoring needs it" when
// the library is absent, or NVML's own reason when it loads but cannot start (no GPU, no driver
// loaded) or sees no GPU.
[[nodiscard]] std::unique_ptr<GpuSampler> open_nvml_sampler();

}  // namespace scalelab::monitor
