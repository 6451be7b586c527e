// Widest-path routing and pair classification (see routes.h).
//
// P2P off: the sender's copy lands in a host buffer and the receiver copies it out. A peer copy
// (cudaMemcpyPeer without P2P) stages chunk by chunk through one pinned buffer, so its two legs
// add up: 1/copy = 1/leg1 + 1/leg2. A collective (NCCL's SHM transport) pipelines the legs, so
// its rate is the slower leg: model_GBps = min(leg1, leg2).
#include "topo/routes.h"

#include <algorithm>
#include <limits>
#include <cmath>
#include <cstdio>
#include <queue>
#include <tuple>

#include "core/error.h"

namespace scalelab::topo {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

}  // namespace

// Widest paths with fewest hops from one source to every vertex, through switches and CPUs only
// (never through another GPU or a NIC). The labels a vertex gets are final once it leaves the
// queue, so they equal those of a search that stops at that vertex: one search serves every
// destination.
struct RouteFinder::Search {
  std::vector<double> best;
  std::vector<int> hops, via_link, prev;
};

namespace {

Route join(const Route& a, const Route& b) {
  Route r = a;
  r.to = b.to;
  r.vertices.insert(r.vertices.end(), b.vertices.begin() + 1, b.vertices.end());
  r.links.insert(r.links.end(), b.links.begin(), b.links.end());
  r.forward.insert(r.forward.end(), b.forward.begin(), b.forward.end());
  if (b.model_GBps < a.model_GBps) r.bottleneck_link = b.bottleneck_link;
  r.model_GBps = std::min(a.model_GBps, b.model_GBps);
  r.peak_GBps = std::min(a.peak_GBps, b.peak_GBps);
  r.copy_GBps = 1.0 / (1.0 / a.copy_GBps + 1.0 / b.copy_GBps);
  for (int p = 0; p < 3; ++p) r.latency_us[p] = std::max(a.latency_us[p], b.latency_us[p]);
  r.through_host = true;
  r.host = a.to;
  return r;
}

}  // namespace

Capacities model_capacities(const Machine& m) {
  Capacities c(2 * m.links.size());
  for (std::size_t i = 0; i < m.links.size(); ++i) c[2 * i] = c[2 * i + 1] = m.links[i].figures.model_GBps;
  return c;
}

RouteFinder::RouteFinder(const Machine& m, P2P p2p, Capacities cap, Transport transport, int job_gpus)
    : m_(m), p2p_(p2p), cap_(std::move(cap)), adjacent_(m.vertex_count()) {
  if (transport == Transport::nccl) {
    bool amd = false;
    for (int c : m.cpus()) amd = amd || is_amd_cpu_generation(m.devices[static_cast<std::size_t>(c)].generation);
    shm_through_cpu_ = !(amd && job_gpus <= 2);
  }
  for (int li = 0; li < static_cast<int>(m.links.size()); ++li) {
    const Link& l = m.links[li];
    adjacent_[l.a].push_back(li);
    if (l.b != l.a) adjacent_[l.b].push_back(li);
    xgmi_ = xgmi_ || (is_gpu_fabric(l.spec.type) && l.spec.type == LinkType::xgmi);
  }
}

RouteFinder::~RouteFinder() = default;

const RouteFinder::Search& RouteFinder::search(int from, Filter filter, bool model) const {
  model = model || cap_.empty();
  auto& slot = searches_[{from, filter, model}];
  if (slot) return *slot;
  slot = std::make_unique<Search>();
  Search& s = *slot;
  const int n = m_.vertex_count();
  s.best.assign(n, -1.0);
  s.hops.assign(n, std::numeric_limits<int>::max());
  s.via_link.assign(n, -1);
  s.prev.assign(n, -1);
  using Item = std::tuple<double, int, int>;  // bw, -hops, vertex
  std::priority_queue<Item> pq;
  s.best[from] = kInf;
  s.hops[from] = 0;
  pq.emplace(kInf, 0, from);
  while (!pq.empty()) {
    auto [bw, neg_hops, v] = pq.top();
    pq.pop();
    if (bw < s.best[v] || -neg_hops > s.hops[v]) continue;
    if (v != from && (m_.is_kind(v, DeviceKind::gpu) || m_.is_kind(v, DeviceKind::nic))) continue;
    for (int li : adjacent_[v]) {
      const Link& l = m_.links[li];
      if (filter == Filter::fabric && !is_gpu_fabric(l.spec.type)) continue;
      if (filter == Filter::no_fabric && is_gpu_fabric(l.spec.type)) continue;
      const bool fwd = l.a == v;
      const int w = fwd ? l.b : l.a;
      const double c = model ? l.figures.model_GBps : cap_[2 * li + (fwd ? 0 : 1)];
      if (c <= 0) continue;
      const double nb = std::min(bw, c);
      const int nh = s.hops[v] + 1;
      if (nb > s.best[w] + 1e-12 || (std::abs(nb - s.best[w]) <= 1e-12 && nh < s.hops[w])) {
        s.best[w] = nb;
        s.hops[w] = nh;
        s.via_link[w] = li;
        s.prev[w] = v;
        pq.emplace(nb, -nh, w);
      }
    }
  }
  return s;
}

Route RouteFinder::extract(const Search& s, int from, int to, bool model) const {
  model = model || cap_.empty();
  Route r;
  r.from = from;
  r.to = to;
  if (s.best[to] < 0) return r;  // no route: empty
  for (int v = to; v != from; v = s.prev[v]) {
    r.vertices.push_back(v);
    r.links.push_back(s.via_link[v]);
    r.forward.push_back(m_.links[s.via_link[v]].b == v);
  }
  r.vertices.push_back(from);
  std::reverse(r.vertices.begin(), r.vertices.end());
  std::reverse(r.links.begin(), r.links.end());
  std::reverse(r.forward.begin(), r.forward.end());
  r.model_GBps = kInf;
  r.peak_GBps = kInf;
  r.copy_GBps = kInf;
  for (std::size_t h = 0; h < r.links.size(); ++h) {
    const Link& l = m_.links[r.links[h]];
    const double c = model ? l.figures.model_GBps : cap_[2 * r.links[h] + (r.forward[h] ? 0 : 1)];
    if (c < r.model_GBps) {
      r.model_GBps = c;
      r.bottleneck_link = r.links[h];
    }
    r.peak_GBps = std::min(r.peak_GBps, l.figures.peak_GBps);
    r.copy_GBps = std::min(r.copy_GBps, l.figures.copy_GBps);
    for (int p = 0; p < 3; ++p) r.latency_us[p] = std::max(r.latency_us[p], l.figures.latency_us[p]);
  }
  return r;
}

Route RouteFinder::route(int from, int to) const {
  if (from == to) {
    Route r;
    r.from = r.to = from;
    r.vertices = {from};
    r.model_GBps = r.peak_GBps = r.copy_GBps = kInf;
    return r;
  }
  Route best;
  // Two GPUs without peer access reach each other through host memory, as P2P off does; with
  // access over NVLink/xGMI only, through host memory where no such route exists.
  const bool gpus = m_.is_kind(from, DeviceKind::gpu) && m_.is_kind(to, DeviceKind::gpu);
  const PeerAccess access = p2p_ == P2P::off ? PeerAccess::none : gpus ? m_.peer_access(from, to) : PeerAccess::all;
  if (access != PeerAccess::none) {
    best = extract(search(from, access == PeerAccess::all ? Filter::all : Filter::fabric, false), from, to, false);
  }
  // NCCL moves data between GPUs that meet only at a CPU through host memory (its SHM transport).
  bool via_host = false;
  if (gpus && shm_through_cpu_ && !best.links.empty()) {
    for (std::size_t i = 1; i + 1 < best.vertices.size(); ++i) via_host = via_host || m_.is_kind(best.vertices[i], DeviceKind::cpu);
    if (via_host) best = Route{};
  }
  if (via_host || (best.links.empty() && access != PeerAccess::all)) {
    // Through the host memory of one CPU socket: pick the socket giving the widest route.
    for (int cpu : m_.cpus()) {
      Route a = extract(search(from, Filter::no_fabric, false), from, cpu, false);
      Route b = extract(search(cpu, Filter::no_fabric, false), cpu, to, false);
      if (a.links.empty() || b.links.empty()) continue;
      Route r = join(a, b);
      if (best.links.empty() || r.model_GBps > best.model_GBps + 1e-12 ||
          (r.model_GBps >= best.model_GBps - 1e-12 && r.links.size() < best.links.size())) {
        best = r;
      }
    }
  }
  if (best.links.empty() && cap_.empty()) {
    throw_input(m_.origin + ": no route from '" + m_.vertex_id(from) + "' to '" + m_.vertex_id(to) + "'" +
                (p2p_ == P2P::off ? " through host memory" : "") + "; check the machine's links");
  }
  return best;
}

PairBandwidth RouteFinder::pair(int from, int to) const {
  const Route r = route(from, to);
  PairBandwidth out{r.model_GBps, r.copy_GBps, 1};
  // Only a two-hop route through a switch on GPU-fabric links spreads over parallel switches.
  if (p2p_ == P2P::off || r.through_host || r.links.size() != 2 || m_.is_device(r.vertices[1])) return out;
  for (int li : r.links) {
    if (!is_gpu_fabric(m_.links[li].spec.type)) return out;
  }
  // Per switch vertex, the fabric figures of the links from `v` to it.
  const auto to_switches = [&](int v) {
    std::map<int, std::pair<double, double>> bw;  // switch -> (model, copy)
    for (int li : adjacent_[v]) {
      const Link& l = m_.links[li];
      const int other = l.a == v ? l.b : l.a;
      if (!is_gpu_fabric(l.spec.type) || m_.is_device(other)) continue;
      bw[other].first += l.figures.model_GBps;
      bw[other].second += l.figures.copy_GBps;
    }
    return bw;
  };
  const auto a = to_switches(from), b = to_switches(to);
  PairBandwidth sum{0, 0, 0};
  for (const auto& [sv, fa] : a) {
    const auto it = b.find(sv);
    if (it == b.end()) continue;
    sum.model_GBps += std::min(fa.first, it->second.first);
    sum.copy_GBps += std::min(fa.second, it->second.second);
    ++sum.paths;
  }
  return sum.paths > 1 ? sum : out;
}

PairClass RouteFinder::classify(int a, int b) const {
  if (a == b) return {PathClass::self, "X"};
  // GPU fabric: a direct link, or through NVSwitches (the fabric links only).
  if (search(a, Filter::fabric, true).best[b] >= 0) {
    // Links a pair can use: a direct link's count; through switches, per switch the smaller side.
    int count = 0;
    std::map<int, int> ca, cb;  // switch vertex -> fabric links to it
    for (int li : adjacent_[a]) {
      const Link& l = m_.links[li];
      if (!is_gpu_fabric(l.spec.type)) continue;
      if ((l.a == a && l.b == b) || (l.a == b && l.b == a)) count += l.spec.count;
      const int other = l.a == a ? l.b : l.a;
      if (!m_.is_device(other)) ca[other] += l.spec.count;
    }
    if (count == 0) {
      for (int li : adjacent_[b]) {
        const Link& l = m_.links[li];
        if (!is_gpu_fabric(l.spec.type)) continue;
        const int other = l.a == b ? l.b : l.a;
        if (!m_.is_device(other)) cb[other] += l.spec.count;
      }
      for (const auto& [sv, n] : ca) {
        const auto it = cb.find(sv);
        if (it != cb.end()) count += std::min(n, it->second);
      }
    }
    if (count > 0) return {PathClass::nvlink, (xgmi_ ? "XG" : "NV") + std::to_string(count)};
  }
  const Route p = extract(search(a, Filter::no_fabric, true), a, b, true);
  int switches = 0, cpus = 0;
  bool socket_link = false;
  for (std::size_t h = 0; h < p.links.size(); ++h) socket_link = socket_link || is_cpu_interconnect(m_.links[p.links[h]].spec.type);
  for (std::size_t i = 1; i + 1 < p.vertices.size(); ++i) {
    if (m_.is_kind(p.vertices[i], DeviceKind::cpu)) ++cpus;
    else if (!m_.is_device(p.vertices[i])) ++switches;
  }
  if (p.links.empty() || socket_link) return {PathClass::sys, "SYS"};
  if (cpus > 0) {
    // Through one CPU: NODE where the route enters and leaves it through different host bridges.
    for (std::size_t i = 1; i + 1 < p.vertices.size(); ++i) {
      if (!m_.is_kind(p.vertices[i], DeviceKind::cpu)) continue;
      const std::string& in = m_.links[static_cast<std::size_t>(p.links[i - 1])].host_bridge;
      const std::string& out = m_.links[static_cast<std::size_t>(p.links[i])].host_bridge;
      if (in != out) return {PathClass::node, "NODE"};
    }
    return {PathClass::phb, "PHB"};
  }
  if (switches > 1) return {PathClass::pxb, "PXB"};
  return {PathClass::pix, "PIX"};
}

Route route_between(const Machine& m, int from, int to, P2P p2p, const Capacities& cap) {
  return RouteFinder(m, p2p, cap).route(from, to);
}

PairClass classify(const Machine& m, int a, int b) { return RouteFinder(m, P2P::on).classify(a, b); }

std::string matrix_legend() {
  return "Legend:\n"
         "  X    = self\n"
         "  SYS  = path traverses PCIe and the link between CPU sockets (QPI/UPI/Infinity Fabric)\n"
         "  NODE = path traverses PCIe and the links between host bridges within one socket\n"
         "  PHB  = path traverses PCIe and a PCIe host bridge (the CPU)\n"
         "  PXB  = path traverses multiple PCIe switches (without the host bridge)\n"
         "  PIX  = path traverses at most one PCIe switch\n"
         "  NV#  = path uses # NVLinks (directly, or through NVSwitches)\n"
         "  XG#  = path uses # AMD xGMI links\n";
}

std::string describe_link(const Machine& m, int link) {
  if (link < 0) return "no link";
  const Link& l = m.links[link];
  char bw[32];
  std::snprintf(bw, sizeof bw, "%.4g GB/s", l.figures.model_GBps);
  return "the " + describe(l.spec) + " link between " + m.vertex_id(l.a) + " and " + m.vertex_id(l.b) + ": " + bw;
}

std::string describe_route(const Machine& m, const Route& r) {
  std::string out;
  for (std::size_t i = 0; i < r.vertices.size(); ++i) {
    if (i > 0) out += " -> ";
    out += m.vertex_id(r.vertices[i]);
    if (r.through_host && r.vertices[i] == r.host) out += "(host memory)";
  }
  return out;
}

}  // namespace scalelab::topo
