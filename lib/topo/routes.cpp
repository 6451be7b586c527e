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

bool passable(const Machine& m, int v, int from, int to) {
  if (v == from || v == to) return true;
  return !(m.is_kind(v, DeviceKind::gpu) || m.is_kind(v, DeviceKind::nic));
}

// Widest path with fewest hops; links for which `allowed` is false are skipped.
template <class Allowed>
Route widest(const Machine& m, int from, int to, const Capacities& cap, Allowed allowed) {
  const int n = m.vertex_count();
  std::vector<double> best(n, -1.0);
  std::vector<int> hops(n, std::numeric_limits<int>::max());
  std::vector<int> via_link(n, -1), prev(n, -1);
  using Item = std::tuple<double, int, int>;  // bw, -hops, vertex
  std::priority_queue<Item> pq;
  best[from] = kInf;
  hops[from] = 0;
  pq.emplace(kInf, 0, from);
  while (!pq.empty()) {
    auto [bw, neg_hops, v] = pq.top();
    pq.pop();
    if (bw < best[v] || -neg_hops > hops[v]) continue;
    if (v == to) break;
    if (v != from && !passable(m, v, from, to)) continue;
    for (int li = 0; li < static_cast<int>(m.links.size()); ++li) {
      const Link& l = m.links[li];
      if (l.a != v && l.b != v) continue;
      if (!allowed(l)) continue;
      const bool fwd = l.a == v;
      const int w = fwd ? l.b : l.a;
      const double c = cap.empty() ? l.figures.model_GBps : cap[2 * li + (fwd ? 0 : 1)];
      if (c <= 0) continue;
      const double nb = std::min(bw, c);
      const int nh = hops[v] + 1;
      if (nb > best[w] + 1e-12 || (std::abs(nb - best[w]) <= 1e-12 && nh < hops[w])) {
        best[w] = nb;
        hops[w] = nh;
        via_link[w] = li;
        prev[w] = v;
        pq.emplace(nb, -nh, w);
      }
    }
  }
  Route r;
  r.from = from;
  r.to = to;
  if (best[to] < 0) return r;  // no route: empty
  for (int v = to; v != from; v = prev[v]) {
    r.vertices.push_back(v);
    r.links.push_back(via_link[v]);
    r.forward.push_back(m.links[via_link[v]].b == v);
  }
  r.vertices.push_back(from);
  std::reverse(r.vertices.begin(), r.vertices.end());
  std::reverse(r.links.begin(), r.links.end());
  std::reverse(r.forward.begin(), r.forward.end());
  r.model_GBps = kInf;
  r.peak_GBps = kInf;
  for (std::size_t h = 0; h < r.links.size(); ++h) {
    const Link& l = m.links[r.links[h]];
    const double c = cap.empty() ? l.figures.model_GBps : cap[2 * r.links[h] + (r.forward[h] ? 0 : 1)];
    if (c < r.model_GBps) {
      r.model_GBps = c;
      r.bottleneck_link = r.links[h];
    }
    r.peak_GBps = std::min(r.peak_GBps, l.figures.peak_GBps);
    for (int p = 0; p < 3; ++p) r.latency_us[p] = std::max(r.latency_us[p], l.figures.latency_us[p]);
  }
  r.copy_GBps = r.peak_GBps;
  return r;
}

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

Route route_between(const Machine& m, int from, int to, P2P p2p, const Capacities& cap) {
  if (from == to) {
    Route r;
    r.from = r.to = from;
    r.vertices = {from};
    r.model_GBps = r.peak_GBps = r.copy_GBps = kInf;
    return r;
  }
  auto no_fabric = [](const Link& l) { return !is_gpu_fabric(l.spec.type); };
  Route best;
  if (p2p == P2P::on) {
    best = widest(m, from, to, cap, [](const Link&) { return true; });
  } else {
    // Through the host memory of one CPU socket: pick the socket giving the widest route.
    for (int cpu : m.cpus()) {
      Route a = widest(m, from, cpu, cap, no_fabric);
      Route b = widest(m, cpu, to, cap, no_fabric);
      if (a.links.empty() || b.links.empty()) continue;
      Route r = join(a, b);
      if (best.links.empty() || r.model_GBps > best.model_GBps + 1e-12 ||
          (r.model_GBps >= best.model_GBps - 1e-12 && r.links.size() < best.links.size())) {
        best = r;
      }
    }
  }
  if (best.links.empty() && cap.empty()) {
    throw_input(m.origin + ": no route from '" + m.vertex_id(from) + "' to '" + m.vertex_id(to) + "'" +
                (p2p == P2P::off ? " through host memory" : "") + "; check the machine's links");
  }
  return best;
}

PairClass classify(const Machine& m, int a, int b) {
  if (a == b) return {PathClass::self, "X"};
  // GPU fabric: a direct link, or through NVSwitches (the fabric links only).
  auto fabric = [](const Link& l) { return is_gpu_fabric(l.spec.type); };
  const Route f = widest(m, a, b, {}, fabric);
  if (!f.links.empty()) {
    // Links a pair can use: a direct link's count; through switches, per switch the smaller side.
    int count = 0;
    bool xgmi = false;
    for (const auto& l : m.links) {
      if (!is_gpu_fabric(l.spec.type)) continue;
      xgmi = xgmi || l.spec.type == LinkType::xgmi;
      if ((l.a == a && l.b == b) || (l.a == b && l.b == a)) count += l.spec.count;
    }
    if (count == 0) {
      for (std::size_t s = 0; s < m.switches.size(); ++s) {
        const int sv = static_cast<int>(m.devices.size() + s);
        int ca = 0, cb = 0;
        for (const auto& l : m.links) {
          if (!is_gpu_fabric(l.spec.type)) continue;
          if ((l.a == a && l.b == sv) || (l.b == a && l.a == sv)) ca += l.spec.count;
          if ((l.a == b && l.b == sv) || (l.b == b && l.a == sv)) cb += l.spec.count;
        }
        count += std::min(ca, cb);
      }
    }
    if (count > 0) return {PathClass::nvlink, (xgmi ? "XG" : "NV") + std::to_string(count)};
  }
  const Route p = widest(m, a, b, {}, [](const Link& l) { return !is_gpu_fabric(l.spec.type); });
  int switches = 0, cpus = 0;
  bool socket_link = false;
  for (std::size_t h = 0; h < p.links.size(); ++h) socket_link = socket_link || is_cpu_interconnect(m.links[p.links[h]].spec.type);
  for (std::size_t i = 1; i + 1 < p.vertices.size(); ++i) {
    if (m.is_kind(p.vertices[i], DeviceKind::cpu)) ++cpus;
    else if (!m.is_device(p.vertices[i])) ++switches;
  }
  if (p.links.empty() || socket_link) return {PathClass::sys, "SYS"};
  if (cpus > 0) return {PathClass::phb, "PHB"};
  if (switches > 1) return {PathClass::pxb, "PXB"};
  return {PathClass::pix, "PIX"};
}

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
