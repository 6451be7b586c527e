// Queries on a Machine (see machine.h).
#include "topo/machine.h"

#include <algorithm>

namespace scalelab::topo {

const std::string& Machine::vertex_id(int v) const {
  return is_device(v) ? devices[v].id : switches[v - devices.size()].id;
}

namespace {
std::vector<int> of_kind(const Machine& m, DeviceKind k) {
  std::vector<int> out;
  for (int i = 0; i < static_cast<int>(m.devices.size()); ++i) {
    if (m.devices[i].kind == k) out.push_back(i);
  }
  return out;
}
}  // namespace

std::vector<int> Machine::gpus() const { return of_kind(*this, DeviceKind::gpu); }
std::vector<int> Machine::nics() const { return of_kind(*this, DeviceKind::nic); }
std::vector<int> Machine::cpus() const { return of_kind(*this, DeviceKind::cpu); }

int Machine::find_vertex(const std::string& id) const {
  for (int v = 0; v < vertex_count(); ++v) {
    if (vertex_id(v) == id) return v;
  }
  return -1;
}

PeerAccess Machine::peer_access(int a, int b) const {
  const auto it = pair_access.find({std::min(a, b), std::max(a, b)});
  if (it != pair_access.end()) return it->second;
  return std::min(devices[static_cast<std::size_t>(a)].p2p, devices[static_cast<std::size_t>(b)].p2p);
}

}  // namespace scalelab::topo
