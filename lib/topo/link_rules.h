// The ends a link type may join, as the hardware is built (and as every file of data/machines
// uses them): NVLink joins GPUs and NVSwitches, xGMI two GPUs, PCIe an endpoint or switch to a CPU
// or PCIe switch, socket links two CPUs; the network between nodes is no link inside one. The
// machine-file parser refuses a link that breaks them (a physically impossible link would
// otherwise be priced as if it existed).
//
//   if (const std::string why = link_ends_problem(m, link); !why.empty()) ...  // "nvlink cannot join a GPU and a NIC; ..."
#pragma once
#include <string>

#include "topo/machine.h"

namespace scalelab::topo {

// "" when `l`'s ends fit its type, else the problem in words, with what the type joins.
[[nodiscard]] std::string link_ends_problem(const Machine& m, const Link& l);

}  // namespace scalelab::topo
