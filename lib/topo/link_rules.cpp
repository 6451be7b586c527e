// Which devices each link type may join (topo/link_rules.h).
#include "topo/link_rules.h"

namespace scalelab::topo {
namespace {

// What a link's end is: the kinds each link type may join (link_ends_fit).
enum class End { gpu, cpu, nic, pcie_switch, nvswitch };

End end_of(const Machine& m, int v) {
  if (m.is_device(v)) {
    const DeviceKind k = m.devices[static_cast<std::size_t>(v)].kind;
    return k == DeviceKind::gpu ? End::gpu : k == DeviceKind::cpu ? End::cpu : End::nic;
  }
  return m.switches[static_cast<std::size_t>(v) - m.devices.size()].kind == SwitchKind::pcie ? End::pcie_switch : End::nvswitch;
}

const char* words_of(End e) {
  switch (e) {
    case End::gpu: return "a GPU";
    case End::cpu: return "a CPU";
    case End::nic: return "a NIC";
    case End::pcie_switch: return "a PCIe switch";
    case End::nvswitch: return "an NVSwitch";
  }
  return "?";
}

// The ends a link type joins, as the hardware is built (and as every file of data/machines uses
// them); empty where the type joins nothing inside a node. A physically impossible link (NVLink
// to a NIC, InfiniBand between two GPUs of a node) would otherwise be priced as if it existed.
std::string link_ends(LinkType t) {
  switch (t) {
    case LinkType::nvlink: return "a GPU to a GPU or an NVSwitch, or two NVSwitches";  // DGX-2: between its boards' switches
    case LinkType::xgmi: return "two GPUs";
    // A device reaches the PCIe fabric through a CPU's root complex or a PCIe switch; GPUs and NICs
    // are endpoints (never linked to each other), NVSwitches carry NVLink only.
    case LinkType::pcie: return "a GPU, NIC, CPU or PCIe switch to a CPU or a PCIe switch, never two CPUs";
    case LinkType::qpi:
    case LinkType::upi:
    case LinkType::amd_fabric: return "two CPUs";  // socket links
    case LinkType::infiniband:
    case LinkType::ethernet:
    case LinkType::memory: return {};
  }
  return {};
}

bool link_ends_fit(LinkType t, End a, End b) {
  const auto pair = [&](End x, End y) { return (a == x && b == y) || (a == y && b == x); };
  const auto upstream = [](End e) { return e == End::cpu || e == End::pcie_switch; };
  switch (t) {
    case LinkType::nvlink: return pair(End::gpu, End::gpu) || pair(End::gpu, End::nvswitch) || pair(End::nvswitch, End::nvswitch);
    case LinkType::xgmi: return pair(End::gpu, End::gpu);
    case LinkType::pcie: return a != End::nvswitch && b != End::nvswitch && !pair(End::cpu, End::cpu) && (upstream(a) || upstream(b));
    case LinkType::qpi:
    case LinkType::upi:
    case LinkType::amd_fabric: return pair(End::cpu, End::cpu);
    case LinkType::infiniband:
    case LinkType::ethernet:
    case LinkType::memory: return false;
  }
  return false;
}

}  // namespace

std::string link_ends_problem(const Machine& m, const Link& l) {
  const std::string type(name_of(l.spec.type));
  // The network between nodes is the file's "network" (every NIC's port joins it), not a link.
  if (is_network(l.spec.type)) {
    return type + " joins nodes, not the devices of one: describe it in \"network\" (every NIC's port joins it)";
  }
  // Host memory is a CPU's "mem_bw_GBps", not a link between two devices.
  if (l.spec.type == LinkType::memory) return "\"memory\" is not a link; give a CPU's memory as its \"mem_bw_GBps\"";
  const End a = end_of(m, l.a), b = end_of(m, l.b);
  if (!link_ends_fit(l.spec.type, a, b)) {
    return type + " cannot join " + words_of(a) + " and " + words_of(b) + "; " + type + " joins " + link_ends(l.spec.type);
  }
  return {};
}

}  // namespace scalelab::topo
