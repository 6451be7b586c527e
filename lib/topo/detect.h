// "this" machine, detected: CPU sockets, cores and NUMA nodes from hwloc (when built with it),
// GPUs and their peer access from CUDA (only when built with CUDA;
// GPU status (topo --machine this): ran on one GPU only, docs/gpu-status.md). Without a GPU, ranks are CPU
// processes that talk through shared memory; their figures come from `scalelab calibrate`
// (model/profile.h), not from links.
#pragma once
#include <string>

#include "topo/machine.h"

namespace scalelab::topo {

[[nodiscard]] Machine detect_this_machine();
// One line on how the machine was detected ("hwloc 2.9.0: 1 socket, 2 cores, 1 NUMA node; no GPU: built without CUDA").
[[nodiscard]] std::string detection_summary();

}  // namespace scalelab::topo
