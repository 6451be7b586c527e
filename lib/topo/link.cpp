// Link figures: one table per link type. Sources (also in docs/machine-format.md):
//  - NVLink per-link 25 GB/s per direction (NVIDIA V100/A100/H100 datasheets: 6x/12x/18x links,
//    300/600/900 GB/s bidirectional); NCCL topology model per link: SM60 18, SM70 20, SM80 20,
//    SM90 20.6 GB/s (NVIDIA/nccl src/graph/topo.h).
//  - PCIe x16 per direction: Gen3 15.75, Gen4 31.5, Gen5 63 GB/s (PCI-SIG); NCCL model 12/24/48.
//  - CPU interconnects, NCCL model: Broadwell QPI 6, Skylake UPI 10, Sapphire Rapids 22, AMD 16.
//    Peer copies across sockets do not approach the spec rates, so peak = model for these.
//  - InfiniBand per port: EDR 100 Gb/s, HDR100 (HDR on two lanes) 100, HDR 200, NDR 400; NCCL model 12/12/24/48 GB/s.
//  - AMD xGMI (MI250X, LUMI-G): 50 GB/s per link per direction (AMD CDNA2 white paper); the model
//    figure applies NCCL's NVLink ratio 20/25 (an assumption: RCCL publishes no table).
//  - Per-hop latency by protocol LL/LL128/Simple (NCCL tuning.cc hwLat, Ring): NVLink
//    {0.6, 1.9, 3.4}, PCIe {1.0, 2.5, 5.7}, network {2.7, 4.0, 14} us.
#include "topo/link.h"

#include <cctype>
#include <map>

namespace scalelab::topo {

namespace {

constexpr std::array<double, 3> kNvlinkLat{0.6, 1.9, 3.4};
constexpr std::array<double, 3> kPcieLat{1.0, 2.5, 5.7};
constexpr std::array<double, 3> kNetLat{2.7, 4.0, 14.0};

struct GenRow {
  double peak;   // per unit (link, lane, port) per direction, GB/s
  double model;  // per unit, GB/s
};

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

const std::map<std::string, GenRow>& table(LinkType t) {
  static const std::map<std::string, GenRow> nvlink{{"1", {20, 18}}, {"2", {25, 20}}, {"3", {25, 20}}, {"4", {25, 20.6}}};
  static const std::map<std::string, GenRow> xgmi{{"2", {50, 40}}, {"3", {64, 51.2}}};
  // PCIe per lane (x16 / 16).
  static const std::map<std::string, GenRow> pcie{{"3", {15.75 / 16, 12.0 / 16}}, {"4", {31.5 / 16, 24.0 / 16}}, {"5", {63.0 / 16, 48.0 / 16}}};
  static const std::map<std::string, GenRow> qpi{{"broadwell", {6, 6}}, {"haswell", {6, 6}}};
  static const std::map<std::string, GenRow> upi{{"skylake", {10, 10}}, {"cascadelake", {10, 10}}, {"icelake", {10, 10}}, {"sapphirerapids", {22, 22}}};
  static const std::map<std::string, GenRow> amd{{"rome", {16, 16}}, {"milan", {16, 16}}, {"genoa", {16, 16}}, {"trento", {16, 16}}};
  static const std::map<std::string, GenRow> ib{{"edr", {12.5, 12}}, {"hdr100", {12.5, 12}}, {"hdr", {25, 24}}, {"ndr", {50, 48}}};
  // Ethernet: the line rate; the model applies the ratio NCCL's IB figures imply (12/12.5).
  static const std::map<std::string, GenRow> eth{{"10g", {1.25, 1.2}}, {"25g", {3.125, 3.0}}, {"50g", {6.25, 6.0}}, {"100g", {12.5, 12}}, {"200g", {25, 24}}, {"400g", {50, 48}}};
  static const std::map<std::string, GenRow> mem{{"ddr4", {20, 20}}, {"ddr5", {30, 30}}};
  switch (t) {
    case LinkType::nvlink: return nvlink;
    case LinkType::xgmi: return xgmi;
    case LinkType::pcie: return pcie;
    case LinkType::qpi: return qpi;
    case LinkType::upi: return upi;
    case LinkType::amd_fabric: return amd;
    case LinkType::infiniband: return ib;
    case LinkType::ethernet: return eth;
    case LinkType::memory: return mem;
  }
  return pcie;
}

constexpr std::array<std::pair<LinkType, std::string_view>, 9> kNames{{
    {LinkType::nvlink, "nvlink"}, {LinkType::xgmi, "xgmi"}, {LinkType::pcie, "pcie"}, {LinkType::qpi, "qpi"},
    {LinkType::upi, "upi"}, {LinkType::amd_fabric, "amd-fabric"}, {LinkType::infiniband, "infiniband"},
    {LinkType::ethernet, "ethernet"}, {LinkType::memory, "memory"}}};

}  // namespace

std::string_view name_of(Protocol p) {
  switch (p) {
    case Protocol::ll: return "LL";
    case Protocol::ll128: return "LL128";
    case Protocol::simple: return "Simple";
  }
  return "?";
}

std::optional<Protocol> parse_protocol(std::string_view text) {
  const std::string t = lower(text);
  if (t == "ll") return Protocol::ll;
  if (t == "ll128") return Protocol::ll128;
  if (t == "simple") return Protocol::simple;
  return std::nullopt;
}

std::string_view name_of(LinkType t) {
  for (const auto& [type, name] : kNames) {
    if (type == t) return name;
  }
  return "?";
}

std::optional<LinkType> parse_link_type(std::string_view text) {
  const std::string t = lower(text);
  for (const auto& [type, name] : kNames) {
    if (name == t) return type;
  }
  return std::nullopt;
}

std::string generations_of(LinkType t) {
  std::string out;
  for (const auto& [gen, row] : table(t)) out += (out.empty() ? "" : ", ") + gen;
  return out;
}

bool is_cpu_interconnect(LinkType t) { return t == LinkType::qpi || t == LinkType::upi || t == LinkType::amd_fabric; }
bool is_gpu_fabric(LinkType t) { return t == LinkType::nvlink || t == LinkType::xgmi; }
bool is_network(LinkType t) { return t == LinkType::infiniband || t == LinkType::ethernet; }
bool is_amd_cpu_generation(std::string_view generation) { return table(LinkType::amd_fabric).count(lower(generation)) != 0; }
bool is_intel_cpu_generation(std::string_view generation) {
  const std::string g = lower(generation);
  return table(LinkType::qpi).count(g) != 0 || table(LinkType::upi).count(g) != 0;
}

std::optional<LinkFigures> figures_of(const LinkSpec& spec) {
  const auto& rows = table(spec.type);
  const auto it = rows.find(lower(spec.generation));
  if (it == rows.end()) return std::nullopt;
  LinkFigures f;
  double units = spec.count;
  if (spec.type == LinkType::pcie) units = spec.width;
  if (is_cpu_interconnect(spec.type) || spec.type == LinkType::memory) units = 1;
  f.peak_GBps = it->second.peak * units;
  f.model_GBps = it->second.model * units;
  f.copy_GBps = spec.type == LinkType::pcie ? f.peak_GBps * kPcieCopyEfficiency : f.peak_GBps;
  if (spec.bw_override_GBps) {
    // A stated figure replaces the table; the model keeps the table's efficiency ratio. A
    // stated (measured) figure is already what copies reach.
    const double ratio = f.peak_GBps > 0 ? f.model_GBps / f.peak_GBps : 1.0;
    f.peak_GBps = *spec.bw_override_GBps;
    f.model_GBps = *spec.bw_override_GBps * ratio;
    f.copy_GBps = *spec.bw_override_GBps;
  }
  if (is_gpu_fabric(spec.type)) f.latency_us = kNvlinkLat;
  else if (is_network(spec.type)) f.latency_us = kNetLat;
  else if (spec.type == LinkType::memory) f.latency_us = {0, 0, 0};
  else f.latency_us = kPcieLat;
  return f;
}

std::string describe(const LinkSpec& spec) {
  const std::string x = " x" + std::to_string(spec.count);
  switch (spec.type) {
    case LinkType::nvlink: return "NVLink " + spec.generation + x;
    case LinkType::xgmi: return "xGMI " + spec.generation + x;
    case LinkType::pcie: return "PCIe Gen" + spec.generation + " x" + std::to_string(spec.width);
    case LinkType::qpi: return "QPI (" + spec.generation + ")";
    case LinkType::upi: return "UPI (" + spec.generation + ")";
    case LinkType::amd_fabric: return "Infinity Fabric (" + spec.generation + ")";
    case LinkType::infiniband: {
      std::string g = spec.generation;
      for (auto& c : g) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      return "InfiniBand " + g + (spec.count > 1 ? x : "");
    }
    case LinkType::ethernet: return "Ethernet " + spec.generation + (spec.count > 1 ? x : "");
    case LinkType::memory: return "host memory";
  }
  return "?";
}

}  // namespace scalelab::topo
