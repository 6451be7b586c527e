// NCCL-like protocol model (see nccl.h). Constants from NVIDIA/nccl src/graph/tuning.cc (and
// src/tuning/nvls.cc in recent releases), as listed in docs/references.md (NCCL's constants) and docs/cost-model.md.
#include "model/nccl.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace scalelab::model {

double bus_factor(collectives::Collective c, int p) { return p < 2 ? 1.0 : collectives::busbw_factor(c, p); }

namespace {

using topo::Protocol;

// Base latency per algorithm and protocol (us): Ring {6.6, 14, 8.4}, Tree {6.8, 14, 8.4}.
constexpr double kBaseRing[3] = {6.6, 14.0, 8.4};
constexpr double kBaseTree[3] = {6.8, 14.0, 8.4};
// NVLS: Simple only; NVLink hardware latency 25 us (tuning.cc hwLat NVLS).
constexpr double kNvlsLatencyUs = 8.4 + 25.0;
constexpr double kNvlsChannels = 16;

struct ArchCaps {
  double ll_max;           // llMaxBws, one node (GB/s)
  double ll128_per_channel;  // perChMaxRingLL128Bws
  double nvls_efficiency;  // 0: no NVLS
};

// NCCL indexes these tables by compute capability: Volta (and older), Ampere (8.x, Ada included),
// Hopper, Blackwell (llMaxBws, perChMaxRingLL128Bws and nvlsEfficiency in src/graph/tuning.cc).
// AMD's CDNA GPUs run RCCL, whose tables are not modelled: Ampere's are used.
ArchCaps caps(topo::GpuArch arch) {
  switch (arch) {
    case topo::GpuArch::blackwell: return {2 * 141.0, 40.0, 0.74};
    case topo::GpuArch::hopper: return {141.0, 36.7, 0.85};
    case topo::GpuArch::ampere:
    case topo::GpuArch::ada:
    case topo::GpuArch::cdna2:
    case topo::GpuArch::cdna3: return {87.7, 20.0, 0.0};
    case topo::GpuArch::pascal:
    case topo::GpuArch::volta:
    case topo::GpuArch::turing: break;
  }
  return {39.0, 20.0, 0.0};
}

int log2_ceil(int n) {
  int k = 0;
  while ((1 << k) < n) ++k;
  return k;
}

}  // namespace

std::string_view name_of(NcclAlgo a) {
  switch (a) {
    case NcclAlgo::ring: return "ring";
    case NcclAlgo::tree: return "tree";
    case NcclAlgo::nvls: return "nvls";
  }
  return "?";
}

GpuFabric build_fabric(const topo::Machine& m, const topo::GpuSelection& sel, topo::P2P p2p) {
  GpuFabric f;
  f.ranks = sel.total;
  f.nodes = sel.nodes;
  f.gpus_per_node = static_cast<int>(sel.gpus.size());
  f.ring = topo::plan_rings(m, sel.gpus, p2p);
  f.intra_GBps = f.ring.bw_GBps;
  f.intra_lat_us = f.ring.hop_latency_us;
  f.bottleneck = f.gpus_per_node > 1 ? topo::describe_bottleneck(m, f.ring) : "one GPU per node: no ring inside the node";
  if (!sel.gpus.empty()) {
    const auto& d = m.devices[sel.gpus.front()];
    f.arch = d.arch.value_or(topo::GpuArch::volta);
    f.gpu_mem_GBps = d.mem_bw_GBps;
  }
  for (const auto& s : m.switches) f.nvswitch = f.nvswitch || s.kind == topo::SwitchKind::nvswitch;
  if (f.nvswitch && !sel.gpus.empty()) {
    for (const auto& l : m.links) {
      const int g = sel.gpus.front();
      if ((l.a == g || l.b == g) && topo::is_gpu_fabric(l.spec.type)) f.nvls_port_GBps += l.figures.model_GBps;
    }
  }
  f.pair_min_GBps = std::numeric_limits<double>::infinity();
  const topo::RouteFinder routes(m, p2p);
  for (std::size_t i = 0; i < sel.gpus.size(); ++i) {
    for (std::size_t j = 0; j < sel.gpus.size(); ++j) {
      if (i == j) continue;
      f.pair_min_GBps = std::min(f.pair_min_GBps, routes.pair(sel.gpus[i], sel.gpus[j]).model_GBps);
    }
  }
  if (f.nodes > 1 && m.network) {
    const auto fig = *topo::figures_of(m.network->port);
    f.inter_GBps = static_cast<double>(m.nics().size()) * fig.model_GBps;
    f.inter_lat_us = fig.latency_us;
    f.pair_min_GBps = std::min(f.pair_min_GBps, fig.model_GBps);
    if (f.inter_GBps < f.intra_GBps || f.gpus_per_node == 1) {
      char words[256];
      std::snprintf(words, sizeof words, "the ring crosses the network between nodes: %zu x %s NICs per node = %.4g GB/s",
                    m.nics().size(), topo::describe(m.network->port).c_str(), f.inter_GBps);
      f.bottleneck = words;
    }
  }
  if (!std::isfinite(f.pair_min_GBps)) f.pair_min_GBps = 0;
  return f;
}

NcclEstimate nccl_estimate(const GpuFabric& f, collectives::Collective c, NcclAlgo a, Protocol p, double bytes) {
  NcclEstimate e;
  e.algo = a;
  e.protocol = p;
  const int pi = static_cast<int>(p);
  const int n = f.ranks;
  if (n < 2) {
    e.time_s = 0;
    return e;
  }
  const ArchCaps cap = caps(f.arch);
  const double channels = std::max<std::size_t>(1, f.ring.channels.size());
  double bw = f.nodes > 1 ? (f.gpus_per_node > 1 ? std::min(f.intra_GBps, f.inter_GBps) : f.inter_GBps) : f.intra_GBps;
  const bool allreduce = c == collectives::Collective::allreduce;
  double lat_us = 0;
  if (a == NcclAlgo::ring) {
    // Steps around the ring: allreduce 2(n-1), the others n-1; those crossing nodes use the network.
    const int steps = allreduce ? 2 * (n - 1) : n - 1;
    const int inter = f.nodes > 1 ? (allreduce ? 2 * (f.nodes - 1) : f.nodes - 1) : 0;
    lat_us = kBaseRing[pi] + (steps - inter) * f.intra_lat_us[pi] + inter * f.inter_lat_us[pi];
    if (p == Protocol::ll) bw = std::min(0.5 * bw, cap.ll_max);
    if (p == Protocol::ll128) bw = std::min(0.92 * bw, channels * cap.ll128_per_channel);
  } else if (a == NcclAlgo::tree) {
    // NCCL's tree serves allreduce across nodes (inside one node it is a chain, and the ring
    // wins); one node is left to the ring here.
    if (!allreduce || f.nodes < 2) {
      e.available = false;
      return e;
    }
    // Up and down a chain inside each node and a binary tree across nodes.
    lat_us = kBaseTree[pi] + 2.0 * ((f.gpus_per_node - 1) * f.intra_lat_us[pi] + log2_ceil(f.nodes) * f.inter_lat_us[pi]);
    bw *= 0.92;
    if (p == Protocol::ll) bw = std::min(bw / 3.8, cap.ll_max);
    if (p == Protocol::ll128) bw *= 120.0 / 128.0;
    // NCCL's tree: algbw = busBw x 0.5 (every GPU receives, reduces and sends the whole buffer
    // up and down); expressed here as nccl-tests' busbw.
    bw = 0.5 * bw * bus_factor(c, n);
  } else {
    if (!allreduce || cap.nvls_efficiency <= 0 || !f.nvswitch || f.nodes > 1 || p != Protocol::simple) {
      e.available = false;
      return e;
    }
    lat_us = kNvlsLatencyUs;
    // The switch reduces: each GPU sends its buffer once and receives the result once, so
    // algbw = port bandwidth x efficiency; busbw is that times nccl-tests' factor.
    bw = f.nvls_port_GBps * cap.nvls_efficiency * (kNvlsChannels - 1) / kNvlsChannels * bus_factor(c, n);
  }
  if (bw <= 0) {
    e.available = false;
    return e;
  }
  e.busbw_GBps = bw;
  e.latency_s = lat_us * 1e-6;
  const double algbw = bw / bus_factor(c, n);
  e.time_s = e.latency_s + bytes / (algbw * 1e9);
  return e;
}

NcclEstimate nccl_best(const GpuFabric& f, collectives::Collective c, double bytes, std::optional<NcclAlgo> algo,
                       std::optional<Protocol> proto) {
  NcclEstimate best;
  best.available = false;
  for (NcclAlgo a : {NcclAlgo::ring, NcclAlgo::tree, NcclAlgo::nvls}) {
    if (algo && *algo != a) continue;
    for (Protocol p : topo::kProtocols) {
      if (proto && *proto != p) continue;
      const NcclEstimate e = nccl_estimate(f, c, a, p, bytes);
      if (e.available && (!best.available || e.time_s < best.time_s)) best = e;
    }
  }
  return best;
}

}  // namespace scalelab::model
