// The NCCL-like model of collectives on GPUs (after NVIDIA/nccl src/graph/tuning.cc):
//   time = latency + bytes / algbw,  algbw = busbw / busbw_factor
// per algorithm (Ring, Tree, NVLS) and protocol (LL, LL128, Simple):
//   latency  = base[algo][proto] + steps x per-hop latency of the links crossed
//              (ring allreduce: 2(p-1) steps, of which 2(nodes-1) cross the network)
//   busbw    = the ring channels' bandwidth (topo/ring.h) within a node, capped by the NICs
//              across nodes; LL: min(0.5 x busbw, llMaxBw); LL128: min(0.92 x busbw,
//              channels x perChMaxLL128Bw); NVLS: per switch channel the port's share x 0.85
//              (Hopper) x (ch-1)/ch x 2; across nodes NCCL's Tree and NVLS-Tree, whose busbw can
//              exceed the NICs' (each node sends and receives the buffer once, not 2(p-1)/p times).
// The machine's topology supplies everything else; docs/cost-model.md derives each term.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "collectives/algorithm.h"
#include "topo/catalog.h"
#include "topo/link.h"
#include "topo/ring.h"

namespace scalelab::model {

enum class NcclAlgo { ring, tree, nvls, nvls_tree };
[[nodiscard]] std::string_view name_of(NcclAlgo a);

// nccl-tests' bus-bandwidth factor (collectives::busbw_factor), taken as 1 below two ranks so
// the model can convert between algbw and busbw without dividing by zero.
[[nodiscard]] double bus_factor(collectives::Collective c, int p);

struct NcclEstimate {
  NcclAlgo algo = NcclAlgo::ring;
  topo::Protocol protocol = topo::Protocol::simple;
  double time_s = 0;
  double latency_s = 0;
  double busbw_GBps = 0;  // the bandwidth term's bus bandwidth
  bool available = true;
};

// Everything about a GPU set that does not depend on the message size (computed once per
// machine and selection, so a sweep costs microseconds per size).
struct GpuFabric {
  int ranks = 0;          // GPUs in all
  int nodes = 1;
  int gpus_per_node = 0;
  topo::RingPlan ring;    // within a node
  double intra_GBps = 0;  // the ring channels' bandwidth within a node
  double inter_GBps = 0;  // across nodes: NICs per node x NIC bandwidth (0 for one node)
  std::array<double, 3> intra_lat_us{};
  std::array<double, 3> inter_lat_us{};
  int net_channels = 0;   // across nodes: NCCL's channels through the NICs (NIC ports, at most one per GPU)
  bool intra_nvlink = false;  // the rings inside a node run over NVLink/xGMI only (latency rows)
  bool amd_host = false;  // the CPUs are AMD's (NCCL's network overhead and llMaxBw rows)
  topo::GpuArch arch = topo::GpuArch::volta;  // the first selected GPU's
  bool nvswitch = false;  // GPUs joined through NVSwitches
  double nvls_port_GBps = 0;  // per-GPU NVLink bandwidth into the switches (NVLS)
  double gpu_mem_GBps = 0;
  double pair_min_GBps = 0;   // slowest pair route among the GPUs (for non-ring algorithms)
  std::string bottleneck;     // in words
};

[[nodiscard]] GpuFabric build_fabric(const topo::Machine& m, const topo::GpuSelection& sel, topo::P2P p2p);

// One algorithm and protocol; `available` false where NCCL would not run it (NVLS off Hopper
// NVSwitch machines or across nodes, NVLS-Tree and Tree on one node, LL/LL128 with either NVLS).
[[nodiscard]] NcclEstimate nccl_estimate(const GpuFabric& f, collectives::Collective c, NcclAlgo a, topo::Protocol p,
                                         double bytes);
// The fastest available (algorithm, protocol), optionally restricted.
[[nodiscard]] NcclEstimate nccl_best(const GpuFabric& f, collectives::Collective c, double bytes,
                                     std::optional<NcclAlgo> algo = std::nullopt,
                                     std::optional<topo::Protocol> proto = std::nullopt);

}  // namespace scalelab::model
