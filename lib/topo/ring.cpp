// Ring channel search (see ring.h).
#include "topo/ring.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <numeric>

namespace scalelab::topo {

namespace {

struct Candidate {
  std::vector<int> order;
  double bw = 0;
  int bottleneck = -1;       // link, or -1
  int bottleneck_host = -1;  // the CPU whose memory bounds the ring, or -1
};

// What the memory of each CPU can carry for rings through host memory (index: device), written
// and read once per byte that bounces there; unbounded where the file gives no "mem_bw_GBps".
using HostCapacities = std::vector<double>;

HostCapacities host_capacities(const Machine& m) {
  HostCapacities c(m.devices.size(), std::numeric_limits<double>::infinity());
  for (int cpu : m.cpus()) {
    const double bw = m.devices[static_cast<std::size_t>(cpu)].mem_bw_GBps;
    if (bw > 0) c[static_cast<std::size_t>(cpu)] = bw;
  }
  return c;
}

// Bytes of host-memory traffic per byte a ring edge through host memory carries: the sender's
// write into the bounce buffer and the receiver's read out of it.
constexpr int kHostPasses = 2;

// NCCL charges a GPU's traffic through one Intel CPU's root complex (a PHB path: the two GPUs
// meet at that CPU, whether the data goes peer to peer or through its memory) 6/5 of the
// bandwidth on every PCIe link of the path, for the root complex's inefficiency
// (INTEL_P2P_OVERHEAD, src/graph/search.cc, followPath). Paths across a socket link (SYS) and
// through AMD CPUs are not charged.
constexpr double kIntelRootComplexCharge = 6.0 / 5.0;

// What a ring edge charges each PCIe link it crosses, per byte it carries.
double pcie_charge(const Machine& m, const Route& r) {
  int cpus = 0;
  bool intel = false;
  for (int v : r.vertices) {
    if (m.is_kind(v, DeviceKind::cpu)) {
      ++cpus;
      intel = is_intel_cpu_generation(m.devices[static_cast<std::size_t>(v)].generation);
    }
  }
  return cpus == 1 && intel ? kIntelRootComplexCharge : 1.0;
}

// Per ring edge (pair of GPU indexes) what it charges each link of its route, per byte.
struct EdgeCharges {
  std::vector<std::vector<std::vector<double>>> per_hop;  // [i][j][hop]
};

EdgeCharges edge_charges(const Machine& m, const std::vector<std::vector<Route>>& routes) {
  EdgeCharges c;
  c.per_hop.resize(routes.size());
  for (std::size_t i = 0; i < routes.size(); ++i) {
    c.per_hop[i].resize(routes[i].size());
    for (std::size_t j = 0; j < routes[i].size(); ++j) {
      const Route& r = routes[i][j];
      const double pcie = pcie_charge(m, r);
      for (int l : r.links) {
        c.per_hop[i][j].push_back(m.links[static_cast<std::size_t>(l)].spec.type == LinkType::pcie ? pcie : 1.0);
      }
    }
  }
  return c;
}

// The bandwidth of a ring given the pair routes on the current capacities: each directed link
// splits its capacity between the ring edges crossing it (in proportion to their charges).
Candidate evaluate(const std::vector<int>& order, const std::vector<std::vector<Route>>& routes,
                   const EdgeCharges& charges, const std::vector<int>& index_of, const Capacities& cap,
                   const HostCapacities& host_cap, std::vector<double>& load, std::vector<int>& host_load) {
  std::fill(load.begin(), load.end(), 0.0);
  std::fill(host_load.begin(), host_load.end(), 0);
  Candidate c{order, std::numeric_limits<double>::infinity(), -1, -1};
  const std::size_t n = order.size();
  for (std::size_t i = 0; i < n; ++i) {
    const int a = index_of[order[i]], b = index_of[order[(i + 1) % n]];
    const Route& r = routes[a][b];
    if (r.links.empty()) return {order, 0, -1, -1};
    const std::vector<double>& charge = charges.per_hop[a][b];
    for (std::size_t h = 0; h < r.links.size(); ++h) load[2 * r.links[h] + (r.forward[h] ? 0 : 1)] += charge[h];
    if (r.through_host) host_load[static_cast<std::size_t>(r.host)] += kHostPasses;
  }
  for (std::size_t d = 0; d < load.size(); ++d) {
    if (load[d] <= 0) continue;
    const double share = cap[d] / load[d];
    // On a tie, name the narrower link (a socket link rather than a shared PCIe uplink).
    const bool tie = std::abs(share - c.bw) <= 1e-9 && c.bottleneck >= 0 && cap[d] < cap[2 * c.bottleneck];
    if (share < c.bw - 1e-9 || tie) {
      c.bw = share;
      c.bottleneck = static_cast<int>(d / 2);
    }
  }
  for (std::size_t v = 0; v < host_load.size(); ++v) {
    if (host_load[v] == 0) continue;
    const double share = host_cap[v] / host_load[v];
    if (share < c.bw - 1e-9) {
      c.bw = share;
      c.bottleneck = -1;
      c.bottleneck_host = static_cast<int>(v);
    }
  }
  return c;
}

Candidate search(const std::vector<int>& gpus, const std::vector<std::vector<Route>>& routes,
                 const EdgeCharges& charges, const std::vector<int>& index_of, const Capacities& cap,
                 const HostCapacities& host_cap) {
  std::vector<double> load(cap.size());
  std::vector<int> host_load(host_cap.size());
  Candidate best;
  if (gpus.size() <= 9) {
    std::vector<int> order = gpus;
    std::sort(order.begin() + 1, order.end());
    do {
      Candidate c = evaluate(order, routes, charges, index_of, cap, host_cap, load, host_load);
      if (c.bw > best.bw + 1e-9) best = c;
    } while (std::next_permutation(order.begin() + 1, order.end()));
    return best;
  }
  // Greedy: from each start, go to the unvisited GPU with the widest route (the first such in
  // `gpus` order). The route widths are copied into one flat table, read n^3 times.
  const std::size_t n = gpus.size();
  std::vector<double> width(n * n);
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < n; ++j) width[i * n + j] = routes[index_of[gpus[i]]][index_of[gpus[j]]].model_GBps;
  }
  std::vector<char> used(n);
  std::vector<int> at;  // positions in `gpus` of the order so far
  for (std::size_t start = 0; start < n; ++start) {
    std::fill(used.begin(), used.end(), 0);
    at.assign(1, static_cast<int>(start));
    used[start] = 1;
    while (at.size() < n) {
      const double* row = &width[static_cast<std::size_t>(at.back()) * n];
      int next = -1;
      double nb = -1;
      for (std::size_t j = 0; j < n; ++j) {
        if (!used[j] && row[j] > nb) { nb = row[j]; next = static_cast<int>(j); }
      }
      used[next] = 1;
      at.push_back(next);
    }
    std::vector<int> order(n);
    for (std::size_t k = 0; k < n; ++k) order[k] = gpus[at[k]];
    Candidate c = evaluate(order, routes, charges, index_of, cap, host_cap, load, host_load);
    if (c.bw > best.bw + 1e-9) best = c;
  }
  return best;
}

// Channels searched on `cap`; `fabric_only_from_start`: `cap` holds nothing but NVLink/xGMI, and
// the first channel's routes are searched on it too.
RingPlan plan_on(const Machine& m, const std::vector<int>& gpus, P2P p2p, int max_channels, Capacities cap,
                 bool fabric_only_from_start) {
  RingPlan plan;
  plan.p2p_off = p2p == P2P::off;
  HostCapacities host_cap = host_capacities(m);
  std::vector<int> index_of(m.vertex_count(), -1);
  for (std::size_t i = 0; i < gpus.size(); ++i) index_of[gpus[i]] = static_cast<int>(i);
  double first_bw = 0;
  for (int ch = 0; ch < max_channels; ++ch) {
    const RouteFinder finder(m, p2p, ch == 0 && !fabric_only_from_start ? Capacities{} : cap, Transport::nccl,
                             static_cast<int>(gpus.size()));
    std::vector<std::vector<Route>> routes(gpus.size(), std::vector<Route>(gpus.size()));
    for (std::size_t i = 0; i < gpus.size(); ++i) {
      for (std::size_t j = 0; j < gpus.size(); ++j) {
        if (i != j) routes[i][j] = finder.route(gpus[i], gpus[j]);
      }
    }
    const EdgeCharges charges = edge_charges(m, routes);
    const Candidate best = search(gpus, routes, charges, index_of, cap, host_cap);
    if (best.bw <= 1e-9 || (ch > 0 && best.bw < 0.5 * first_bw - 1e-9)) break;
    if (ch == 0) first_bw = best.bw;
    RingChannel c;
    c.order = best.order;
    c.bw_GBps = best.bw;
    c.bottleneck_link = best.bottleneck;
    c.bottleneck_host = best.bottleneck_host;
    for (std::size_t i = 0; i < best.order.size(); ++i) {
      const int a = index_of[best.order[i]], b = index_of[best.order[(i + 1) % best.order.size()]];
      const Route& r = routes[a][b];
      c.edges.push_back(r);
      for (std::size_t h = 0; h < r.links.size(); ++h) {
        cap[2 * r.links[h] + (r.forward[h] ? 0 : 1)] -= charges.per_hop[a][b][h] * best.bw;
      }
      if (r.through_host) {
        double& left = host_cap[static_cast<std::size_t>(r.host)];
        left = std::max(0.0, left - kHostPasses * best.bw);
      }
      for (int p = 0; p < 3; ++p) plan.hop_latency_us[p] = std::max(plan.hop_latency_us[p], r.latency_us[p]);
      plan.through_host = plan.through_host || r.through_host;
    }
    for (auto& v : cap) v = std::max(0.0, v);
    if (ch == 0) {
      // Rings over NVLink/xGMI only: later channels may not fall back to PCIe or the host.
      bool fabric_only = true;
      for (const Route& r : c.edges) {
        for (int l : r.links) fabric_only = fabric_only && is_gpu_fabric(m.links[l].spec.type);
      }
      if (fabric_only) {
        for (std::size_t l = 0; l < m.links.size(); ++l) {
          if (!is_gpu_fabric(m.links[l].spec.type)) cap[2 * l] = cap[2 * l + 1] = 0;
        }
      }
    }
    plan.bw_GBps += c.bw_GBps;
    if (ch == 0) {
      plan.bottleneck_link = c.bottleneck_link;
      plan.bottleneck_host = c.bottleneck_host;
    }
    plan.channels.push_back(std::move(c));
  }
  return plan;
}

}  // namespace

RingPlan plan_rings(const Machine& m, const std::vector<int>& gpus, P2P p2p, int max_channels) {
  if (gpus.size() < 2) return {};
  // NCCL searches rings over NVLink first and falls back to PCIe only when NVLink cannot close a
  // ring. Searching all links at once let a wide PCIe Gen5 route win the first channel and NVLink
  // rings join it, a total above what the GPUs' NVLinks carry.
  if (p2p == P2P::on) {
    Capacities fabric = model_capacities(m);
    bool any = false;
    for (std::size_t l = 0; l < m.links.size(); ++l) {
      if (is_gpu_fabric(m.links[l].spec.type)) any = true;
      else fabric[2 * l] = fabric[2 * l + 1] = 0;
    }
    if (any) {
      RingPlan plan = plan_on(m, gpus, p2p, max_channels, std::move(fabric), true);
      if (!plan.channels.empty()) return plan;
    }
  }
  return plan_on(m, gpus, p2p, max_channels, model_capacities(m), false);
}

std::string describe_bottleneck(const Machine& m, const RingPlan& plan) {
  if (plan.channels.empty()) return "no ring (fewer than two GPUs)";
  char total[64];
  std::snprintf(total, sizeof total, "%zu ring channel%s, %.4g GB/s per direction in all", plan.channels.size(),
                plan.channels.size() == 1 ? "" : "s", plan.bw_GBps);
  const RingChannel& first = plan.channels.front();
  // Why through host memory: P2P off for the job, GPUs without peer-to-peer access, or NCCL's
  // shared-memory transport between GPUs that meet only at a CPU.
  std::string reason;
  if (plan.through_host) {
    bool lacks_p2p = false;
    for (const Route& e : first.edges) {
      lacks_p2p = lacks_p2p || (e.through_host && m.peer_access(e.from, e.to) != PeerAccess::all);
    }
    reason = plan.p2p_off ? " (through host memory: P2P off)"
             : lacks_p2p  ? " (through host memory: these GPUs have no peer-to-peer access)"
                          : " (through host memory: NCCL's shared-memory transport, as GPUs that meet only at a CPU use)";
  }
  if (plan.bottleneck_host >= 0) {
    // Host memory, not a link, bounds the ring: every transfer through it is written and read.
    int hops = 0;
    for (const Route& e : first.edges) hops += e.through_host && e.host == plan.bottleneck_host ? 1 : 0;
    char words[256];
    std::snprintf(words, sizeof words,
                  "the ring goes through %s's memory (%.4g GB/s, each byte written and read once: %d of the ring's "
                  "transfers share it, %.4g GB/s each)",
                  m.vertex_id(plan.bottleneck_host).c_str(),
                  m.devices[static_cast<std::size_t>(plan.bottleneck_host)].mem_bw_GBps, hops, first.bw_GBps);
    return words + reason + "; " + total;
  }
  std::string words = "the ring crosses " + describe_link(m, plan.bottleneck_link);
  // How many of the first channel's transfers share that link in its busier direction (the reason
  // a channel gets a fraction of the link's figure), and how many of them NCCL charges 6/5.
  int along = 0, against = 0, charged_along = 0, charged_against = 0;
  const bool pcie = m.links[static_cast<std::size_t>(plan.bottleneck_link)].spec.type == LinkType::pcie;
  for (const Route& e : first.edges) {
    const bool charged = pcie && pcie_charge(m, e) > 1.0;
    for (std::size_t h = 0; h < e.links.size(); ++h) {
      if (e.links[h] != plan.bottleneck_link) continue;
      ++(e.forward[h] ? along : against);
      if (charged) ++(e.forward[h] ? charged_along : charged_against);
    }
  }
  const double extra = kIntelRootComplexCharge - 1.0;
  const bool along_busier = along + charged_along * extra >= against + charged_against * extra;
  const int sharing = along_busier ? along : against;
  const int charged = along_busier ? charged_along : charged_against;
  if (sharing > 1 || charged > 0) {
    std::string detail;
    if (sharing > 1) detail += " shared by " + std::to_string(sharing) + " of the ring's transfers each way";
    if (charged > 0) {
      detail += sharing > 1 ? (charged == sharing ? ", each" : ", " + std::to_string(charged) + " of them") : "";
      detail += " at 6/5 of " + std::string(charged == 1 ? "its" : "their") +
                " bytes through the Intel CPU's root complex, as NCCL counts it";
    }
    char each[64];
    std::snprintf(each, sizeof each, sharing > 1 ? " (%.4g GB/s each)" : " (%.4g GB/s)", first.bw_GBps);
    words += "," + detail + each;
  }
  return words + reason + "; " + total;
}

}  // namespace scalelab::topo
