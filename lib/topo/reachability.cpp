// What a machine must connect (topo/reachability.h).
#include "topo/reachability.h"

#include <queue>
#include <vector>

#include "topo/routes.h"

namespace scalelab::topo {

Unreached unreached_gpu(const Machine& m) {
  std::vector<std::vector<int>> adj(m.vertex_count());
  for (const auto& l : m.links) {
    adj[l.a].push_back(l.b);
    adj[l.b].push_back(l.a);
  }
  const auto gpus = m.gpus();
  std::vector<std::vector<bool>> reach;
  for (int g : gpus) {
    std::vector<bool> seen(adj.size(), false);
    std::queue<int> q;
    q.push(g);
    seen[g] = true;
    while (!q.empty()) {
      const int v = q.front();
      q.pop();
      // Data does not pass through another GPU or a NIC.
      if (v != g && (m.is_kind(v, DeviceKind::gpu) || m.is_kind(v, DeviceKind::nic))) continue;
      for (int w : adj[v]) {
        if (!seen[w]) { seen[w] = true; q.push(w); }
      }
    }
    bool host = false;
    for (int cpu : m.cpus()) host = host || seen[cpu];
    if (!host) {
      return {"device '" + m.devices[g].id + "' (GPU)",
              "has no route to a CPU; add a PCIe link from it (or its switch) to a CPU"};
    }
    reach.push_back(std::move(seen));
  }
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    for (int other : gpus) {
      if (!reach[i][other]) {
        return {"device '" + m.devices[gpus[i]].id + "' (GPU)",
                "has no route to '" + m.devices[other].id + "'; add the links that join them"};
      }
    }
  }
  return {};
}

// RouteFinder's own search (and its message), once at parse time for every command: a NIC left
// without a link would otherwise be refused by one command and priced by the others.
void check_routes_to_cpus(const Machine& m) {
  const RouteFinder routes(m, P2P::on);
  for (int d = 0; d < static_cast<int>(m.devices.size()); ++d) {
    for (int cpu : m.cpus()) (void)routes.route(d, cpu);
  }
}

}  // namespace scalelab::topo
