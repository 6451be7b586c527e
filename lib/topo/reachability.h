// What a machine must connect, as the machine-file parser checks it: every GPU reaches a CPU (its
// host) and every other GPU of the node without passing through another GPU or a NIC, and every
// device (GPU, NIC, CPU) reaches every CPU, so that `topo` can give each its CPU affinity and
// predict/simulate can route host-memory transfers and NIC traffic.
//
//   if (const Unreached u = unreached_gpu(m); !u.entry.empty()) ...  // "device 'gpu3' (GPU)", "has no route to a CPU; ..."
#pragma once
#include <string>

#include "topo/machine.h"

namespace scalelab::topo {

// The first GPU that misses a CPU or another GPU: the entry to name and the problem in words,
// with what to add; both empty when every GPU reaches them.
struct Unreached {
  std::string entry, problem;
};
[[nodiscard]] Unreached unreached_gpu(const Machine& m);

// Throws RouteFinder's own input error ("no route from 'nic1' to 'cpu0'") for the first device
// without a route to a CPU.
void check_routes_to_cpus(const Machine& m);

}  // namespace scalelab::topo
