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
// Per-hop latency of Tree (hwLat's Tree column; the links' own figures are Ring's): NVLink, PCIe,
// network, by protocol.
constexpr double kTreeNvlinkLat[3] = {0.6, 1.25, 4.0};
constexpr double kTreePcieLat[3] = {1.0, 1.9, 4.0};
constexpr double kTreeNetLat[3] = {5.0, 8.5, 14.0};
// NVLS and NVLS-Tree: Simple only, no base; the switch's hardware latency 25 us, and NVLS-Tree's
// network hops 20.9 us each.
constexpr double kNvlsLatencyUs = 25.0;
constexpr double kNvlsTreeNetLatUs = 20.9;
// Across nodes the ring's intra-node hop costs at least the network overhead (Intel 1 us, AMD 2;
// x3 for Simple), and Simple's latency is 1.4x once the ring reaches its plateau (1.9x before Ampere).
constexpr double kNetOverheadIntelUs = 1.0, kNetOverheadAmdUs = 2.0;
constexpr double kRingPlateauLatency = 1.4, kRingPlateauLatencyPreAmpere = 1.9;

// NCCL's Tree correction: trees fall short of the model at medium sizes, so NCCL scales an
// allreduce's Tree bandwidth by a factor per protocol (LL, LL128, Simple) and power of two of the
// size, 64 B to 256 MiB: index floor(log2(bytes / 64)). Tree reads the first 23 entries; NVLS-Tree
// all 24, on Blackwell only (treeCorrectionFactor and ncclTopoGetAlgoTime in tuning.cc).
constexpr double kTreeCorrection[3][24] = {
    {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0, 1.0},
    {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0, 1.0},
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9, .9}};

double tree_correction(Protocol p, double bytes, int entries) {
  if (bytes < 64) return 1.0;
  const int index = static_cast<int>(std::floor(std::log2(std::floor(bytes / 64))));
  return index < entries ? kTreeCorrection[static_cast<int>(p)][index] : 1.0;
}

// Per-channel caps by node count: one node, two nodes, three or more (NCCL's N1/N2/N4 columns).
struct ByNodes {
  double n1, n2, n3;
  [[nodiscard]] double at(int nodes) const { return nodes <= 1 ? n1 : nodes == 2 ? n2 : n3; }
};

struct ArchCaps {
  double ll_max;             // llMaxBws, one node (GB/s)
  double ll128_per_channel;  // perChMaxRingLL128Bws
  ByNodes tree_per_channel;  // perChMaxTreeBws
  ByNodes tree_ll128_per_channel;  // perChMaxTreeLL128Bws
  ByNodes nvls_tree_per_channel;   // perChMaxNVLSTreeBws (0: no NVLS-Tree)
  double nvls_efficiency;    // 0: no NVLS
  bool pre_ampere;
};

// NCCL indexes these tables by compute capability: Volta (and older), Ampere (8.x, Ada included),
// Hopper, Blackwell (src/graph/tuning.cc). AMD's CDNA GPUs run RCCL, whose tables are not
// modelled: Ampere's are used.
ArchCaps caps(topo::GpuArch arch) {
  switch (arch) {
    case topo::GpuArch::blackwell:
      return {2 * 141.0, 40.0, {70.0, 42.8, 24.0}, {55.6, 31.67, 20.0}, {0.0, 96.0, 80.0}, 0.74, false};
    case topo::GpuArch::hopper:
      return {141.0, 36.7, {38.7, 41.4, 36.0}, {36.7, 36.7, 29.0}, {0.0, 57.7, 45.5}, 0.85, false};
    case topo::GpuArch::ampere:
    case topo::GpuArch::ada:
    case topo::GpuArch::cdna2:
    case topo::GpuArch::cdna3:
      return {87.7, 20.0, {24.0, 23.6, 17.8}, {20.0, 20.0, 20.0}, {24.0, 23.6, 17.8}, 0.0, false};
    case topo::GpuArch::pascal:
    case topo::GpuArch::volta:
    case topo::GpuArch::turing: break;
  }
  return {39.0, 20.0, {26.5, 18.5, 10.0}, {20.0, 20.0, 20.0}, {26.5, 18.5, 10.0}, 0.0, true};
}

// llMaxBw across nodes is chosen by the CPUs' vendor: Intel {39.0, 20.4}, AMD {22.5, 19.0} for two
// and for three or more nodes.
double ll_max(const ArchCaps& cap, int nodes, bool amd_host) {
  if (nodes <= 1) return cap.ll_max;
  if (amd_host) return nodes == 2 ? 22.5 : 19.0;
  return nodes == 2 ? 39.0 : 20.4;
}

std::string fmt_percent(double share) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3g%%", 100 * share);
  return text;
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
    case NcclAlgo::nvls_tree: return "nvls_tree";
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
  f.intra_nvlink = !f.ring.channels.empty() && !f.ring.through_host;
  for (const auto& ch : f.ring.channels) {
    for (const auto& e : ch.edges) {
      for (int l : e.links) f.intra_nvlink = f.intra_nvlink && topo::is_gpu_fabric(m.links[static_cast<std::size_t>(l)].spec.type);
    }
  }
  for (int c : m.cpus()) f.amd_host = f.amd_host || topo::is_amd_cpu_generation(m.devices[static_cast<std::size_t>(c)].generation);
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
    f.inter_GBps = static_cast<double>(m.nics().size()) * fig.model_GBps * m.network->efficiency;
    // One channel per NIC port, at most one per GPU of the node (NCCL pairs each channel with a NIC).
    f.net_channels = std::max(1, std::min(static_cast<int>(m.nics().size()) * m.network->port.count, f.gpus_per_node));
    f.inter_lat_us = fig.latency_us;
    f.pair_min_GBps = std::min(f.pair_min_GBps, fig.model_GBps * m.network->efficiency);
    if (f.inter_GBps < f.intra_GBps || f.gpus_per_node == 1) {
      char words[256];
      std::snprintf(words, sizeof words, "the ring crosses the network between nodes: %zu x %s NICs per node%s = %.4g GB/s",
                    m.nics().size(), topo::describe(m.network->port).c_str(),
                    m.network->efficiency < 1 ? (" at " + fmt_percent(m.network->efficiency) + " of their figure").c_str() : "",
                    f.inter_GBps);
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
  const bool multi = f.nodes > 1;
  double bw = multi ? (f.gpus_per_node > 1 ? std::min(f.intra_GBps, f.inter_GBps) : f.inter_GBps) : f.intra_GBps;
  const bool allreduce = c == collectives::Collective::allreduce;
  // NCCL's bandwidth ("busBw" in tuning.cc) and the ratio turning it into algbw.
  double ratio = 0;
  double lat_us = 0;
  if (a == NcclAlgo::ring) {
    // Steps around the ring: allreduce 2(n-1), the others n-1; those crossing nodes use the network.
    const int steps = allreduce ? 2 * (n - 1) : n - 1;
    const int inter = multi ? (allreduce ? 2 * (f.nodes - 1) : f.nodes - 1) : 0;
    double intra_lat = f.intra_lat_us[pi];
    if (multi) {
      const double overhead = (f.amd_host ? kNetOverheadAmdUs : kNetOverheadIntelUs) * (p == Protocol::simple ? 3 : 1);
      intra_lat = std::max(intra_lat, overhead);
    }
    lat_us = kBaseRing[pi] + (steps - inter) * intra_lat + inter * f.inter_lat_us[pi];
    if (multi && allreduce && p == Protocol::simple) lat_us *= cap.pre_ampere ? kRingPlateauLatencyPreAmpere : kRingPlateauLatency;
    if (p == Protocol::ll) bw = std::min(0.5 * bw, ll_max(cap, f.nodes, f.amd_host));
    if (p == Protocol::ll128) bw = std::min(0.92 * bw, channels * cap.ll128_per_channel);
    // nccl-tests' busbw is NCCL's ring bandwidth itself.
    ratio = 1.0 / bus_factor(c, n);
  } else if (a == NcclAlgo::tree) {
    // NCCL's tree serves allreduce across nodes (inside one node it is a chain, and the ring
    // wins); one node is left to the ring here.
    if (!allreduce || !multi) {
      e.available = false;
      return e;
    }
    // Up and down a chain inside each node and a binary tree across nodes. The tree's channels
    // are the NICs'; on two nodes NCCL's search lets each carry up to twice its NIC's share
    // inside the node (every node sends and receives the buffer once across the network, not
    // 2(n-1)/n times as in the ring), on more nodes one share.
    const double nch = f.net_channels;
    const double nic = f.inter_GBps / nch;
    const double per_channel = f.gpus_per_node > 1 ? std::min(f.intra_GBps / nch, (f.nodes <= 2 ? 2.0 : 1.0) * nic) : nic;
    const double intra_hop = f.intra_nvlink ? kTreeNvlinkLat[pi] : kTreePcieLat[pi];
    lat_us = kBaseTree[pi] + 2.0 * ((f.gpus_per_node - 1) * intra_hop + log2_ceil(f.nodes) * kTreeNetLat[pi]);
    bw = std::min(0.92 * nch * per_channel, nch * cap.tree_per_channel.at(f.nodes));
    if (p == Protocol::ll) bw = std::min(bw / 3.8, ll_max(cap, f.nodes, f.amd_host));
    if (p == Protocol::ll128) bw = std::min(bw * 120.0 / 128.0, nch * cap.tree_ll128_per_channel.at(f.nodes));
    bw *= tree_correction(p, bytes, 23);
    // Every GPU receives, reduces and sends the whole buffer up and down: algbw = 0.5 x bw.
    ratio = 0.5;
  } else {
    // NVLS inside one node, NVLS-Tree across nodes: the NVSwitches reduce. One channel per GPU
    // ("head") on one node, one per NIC across nodes; a head moves twice its share over its
    // NVLinks, the others once, so each channel gets port / (channels + 1) of a GPU's NVLinks.
    const bool tree = a == NcclAlgo::nvls_tree;
    if (!allreduce || cap.nvls_efficiency <= 0 || !f.nvswitch || p != Protocol::simple || tree != multi) {
      e.available = false;
      return e;
    }
    const double nch = multi ? std::min(f.net_channels, f.gpus_per_node) : f.gpus_per_node;
    if (nch < 2) {
      e.available = false;
      return e;
    }
    // NCCL counts two allreduce operations in flight per channel (x2) at nvlsEfficiency.
    double per_channel = f.nvls_port_GBps / (nch + 1) * cap.nvls_efficiency * (nch - 1) / nch * 2;
    if (multi) {
      const double nic = f.inter_GBps / f.net_channels;
      per_channel = std::min({per_channel, (f.nodes <= 2 ? 2.0 : 1.0) * nic, cap.nvls_tree_per_channel.at(f.nodes)});
      lat_us = kNvlsLatencyUs + 2.0 * log2_ceil(f.nodes) * kNvlsTreeNetLatUs;
      if (f.arch == topo::GpuArch::blackwell) per_channel *= tree_correction(p, bytes, 24);
    } else {
      lat_us = kNvlsLatencyUs;
    }
    bw = nch * per_channel;
    ratio = 1.0 / bus_factor(c, n);
  }
  if (bw <= 0) {
    e.available = false;
    return e;
  }
  const double algbw = bw * ratio;
  e.busbw_GBps = algbw * bus_factor(c, n);
  e.latency_s = lat_us * 1e-6;
  e.time_s = e.latency_s + bytes / (algbw * 1e9);
  return e;
}

NcclEstimate nccl_best(const GpuFabric& f, collectives::Collective c, double bytes, std::optional<NcclAlgo> algo,
                       std::optional<Protocol> proto) {
  NcclEstimate best;
  best.available = false;
  for (NcclAlgo a : {NcclAlgo::ring, NcclAlgo::tree, NcclAlgo::nvls, NcclAlgo::nvls_tree}) {
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
