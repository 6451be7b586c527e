// Machine-file parser and checks (see machine_file.h and docs/machine-format.md).
#include "topo/machine_file.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <map>
#include <set>
#include <tuple>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/file_check.h"
#include "core/json_text.h"
#include "topo/link_rules.h"
#include "topo/reachability.h"
#include "topo/routes.h"

namespace scalelab::topo {

namespace {

using nlohmann::json;

// What a machine file may say (docs/machine-format.md, Rules the parser enforces).
// Format 2 added the GPUs' "arch"; format 1 files are still read, the architecture then taken from
// the model name with a warning.
constexpr const char* kFormat = "scalelab-machine/2";
constexpr const char* kFormat1 = "scalelab-machine/1";
constexpr double kMinFigure = 1e-3;       // GB/s, TFLOP/s, GiB: anything smaller is a unit mix-up
constexpr double kMaxGBps = 1e5;          // 100 TB/s per device or link
constexpr double kMaxTflops = 1e5;
constexpr double kMaxMemoryGiB = 1e6;
constexpr int kMaxCores = 100'000;
constexpr int kMaxLinkCount = 64;         // links or ports bundled in one entry
constexpr int kMaxLinkWidth = 32;         // PCIe lanes
constexpr double kMinNetworkEfficiency = 0.01;  // a network's "efficiency": below 1% is a mistake

// Collects the context every error names: the file and the entry.
struct Ctx {
  std::string origin;
  int version = 2;  // the file's format version
  [[noreturn]] void fail(const std::string& entry, const std::string& problem) const {
    throw_input(origin + ": " + entry + ": " + problem);
  }
};

// Every key of an object is one the format defines for it (docs/machine-format.md): a misspelt
// figure ("fp32_tflpos") would otherwise leave the figure unset without a word.
void check_keys(const Ctx& c, const json& j, const std::string& entry, std::initializer_list<const char*> known) {
  if (!j.is_object()) return;
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (std::any_of(known.begin(), known.end(), [&](const char* k) { return it.key() == k; })) continue;
    std::string list;
    for (const char* k : known) list += std::string(list.empty() ? "" : ", ") + k;
    c.fail(entry, "unknown key " + json(it.key()).dump() + "; the keys here are " + list);
  }
}

std::string get_string(const Ctx& c, const json& j, const std::string& entry, const char* key, bool required) {
  if (!j.contains(key)) {
    if (required) c.fail(entry, std::string("missing \"") + key + "\"; every entry of this kind needs one");
    return {};
  }
  if (j[key].is_number_integer()) return std::to_string(j[key].get<long long>());
  if (!j[key].is_string()) c.fail(entry, std::string("\"") + key + "\" must be a string");
  return j[key].get<std::string>();
}

// A figure such as a bandwidth: absent gives `fallback` (0: unknown); present, a finite number in
// [lo, hi]. Ranges are generous (docs/machine-format.md) and catch typos and units mixed up.
double get_number(const Ctx& c, const json& j, const std::string& entry, const char* key, double fallback, double lo,
                  double hi) {
  if (!j.contains(key)) return fallback;
  if (!j[key].is_number()) c.fail(entry, std::string("\"") + key + "\" must be a number");
  const double v = j[key].get<double>();
  if (!(v >= lo && v <= hi)) {
    char range[96];
    std::snprintf(range, sizeof range, "between %g and %g", lo, hi);
    const char* what = v <= 0 ? ", not positive" : v < lo ? ", too small" : ", too large";
    c.fail(entry, std::string("\"") + key + "\" is " + j[key].dump() + what + "; give a figure " + range + ", or leave it out");
  }
  return v;
}

// A count such as a link's width: absent gives `fallback`; present, a whole number in [lo, hi].
int get_count(const Ctx& c, const json& j, const std::string& entry, const char* key, int fallback, int lo, int hi) {
  if (!j.contains(key)) return fallback;
  const json& v = j[key];
  if (!v.is_number()) c.fail(entry, std::string("\"") + key + "\" must be a number");
  const double x = v.get<double>();
  if (!(x >= lo && x <= hi) || x != static_cast<double>(static_cast<long long>(x))) {
    c.fail(entry, std::string("\"") + key + "\" is " + v.dump() + "; give a whole number from " + std::to_string(lo) + " to " +
                      std::to_string(hi));
  }
  return static_cast<int>(x);
}

// An id: a non-empty name without spaces or control characters (links refer to it).
std::string get_id(const Ctx& c, const json& j, const std::string& entry) {
  std::string id = get_string(c, j, entry, "id", true);
  bool ok = !id.empty();
  for (unsigned char ch : id) ok = ok && ch > ' ' && ch != 0x7f;
  if (!ok) c.fail(entry, "\"id\" is " + json(id).dump() + "; give a non-empty name without spaces");
  return id;
}

// A GPU's "arch": required in format 2; in format 1 taken from the model name (returns true then).
bool parse_arch(const Ctx& c, const json& j, const std::string& e, Device& d) {
  if (j.contains("arch")) {
    const std::string arch = get_string(c, j, e, "arch", true);
    d.arch = parse_gpu_arch(arch);
    if (!d.arch) c.fail(e, "unknown \"arch\" '" + arch + "'; use one of " + gpu_arch_names());
    return false;
  }
  if (c.version >= 2) c.fail(e, "missing \"arch\"; add one of " + gpu_arch_names());
  // A name no product list knows is taken as Volta, as versions before format 2 did for every GPU
  // not named H100, H200 or A100.
  d.arch = arch_from_model_name(d.model).value_or(GpuArch::volta);
  return true;
}

// "p2p": true (any path), false (none: through host memory) or "nvlink" (over NVLink/xGMI only).
PeerAccess parse_peer_access(const Ctx& c, const json& v, const std::string& entry) {
  if (v.is_boolean()) return v.get<bool>() ? PeerAccess::all : PeerAccess::none;
  if (v.is_string() && v.get<std::string>() == "nvlink") return PeerAccess::fabric;
  c.fail(entry, "\"p2p\" must be true, false or \"nvlink\" (false: no peer-to-peer access, through host memory; "
                "\"nvlink\": peer access over NVLink/xGMI only)");
}

json peer_access_json(PeerAccess a) {
  if (a == PeerAccess::fabric) return "nvlink";
  return a == PeerAccess::all;
}

Device parse_device(const Ctx& c, const json& j, const std::string& entry, bool& arch_guessed) {
  if (!j.is_object()) c.fail(entry, "must be an object");
  Device d;
  d.id = get_id(c, j, entry);
  const std::string kind = get_string(c, j, entry, "kind", true);
  if (kind == "gpu") d.kind = DeviceKind::gpu;
  else if (kind == "cpu") d.kind = DeviceKind::cpu;
  else if (kind == "nic") d.kind = DeviceKind::nic;
  else c.fail(entry + " (" + d.id + ")", "unknown device kind '" + kind + "'; use gpu, cpu or nic");
  const std::string e = entry + " (" + d.id + ")";
  d.model = get_string(c, j, e, "model", false);
  d.fp32_tflops = get_number(c, j, e, "fp32_tflops", 0, kMinFigure, kMaxTflops);
  d.fp16_tflops = get_number(c, j, e, "fp16_tflops", 0, kMinFigure, kMaxTflops);
  d.mem_bw_GBps = get_number(c, j, e, "mem_bw_GBps", 0, kMinFigure, kMaxGBps);
  d.memory_GiB = get_number(c, j, e, "memory_GiB", 0, kMinFigure, kMaxMemoryGiB);
  d.cores = get_count(c, j, e, "cores", 0, 1, kMaxCores);
  d.generation = get_string(c, j, e, "generation", false);
  if (d.kind == DeviceKind::gpu) arch_guessed = parse_arch(c, j, e, d);
  else if (j.contains("arch")) c.fail(e, "\"arch\" is for GPUs; remove it, or give a CPU's \"generation\"");
  if (j.contains("p2p")) {
    if (d.kind != DeviceKind::gpu) c.fail(e, "\"p2p\" is for GPUs; remove it");
    d.p2p = parse_peer_access(c, j["p2p"], e);
  }
  check_keys(c, j, e,
             {"id", "kind", "model", "arch", "generation", "cores", "fp32_tflops", "fp16_tflops", "mem_bw_GBps", "memory_GiB",
              "p2p"});
  return d;
}

LinkSpec parse_spec(const Ctx& c, const json& j, const std::string& entry) {
  LinkSpec s;
  const std::string type = get_string(c, j, entry, "type", true);
  const auto t = parse_link_type(type);
  if (!t) c.fail(entry, "unknown link type '" + type + "'; use nvlink, xgmi, pcie, qpi, upi, amd-fabric, infiniband or ethernet");
  s.type = *t;
  s.generation = get_string(c, j, entry, "gen", true);
  // A field the link's type does not read would be ignored without a word (docs/machine-format.md:
  // "count" for NVLink, xGMI and network ports, "width" for PCIe, neither for a socket link).
  const bool cpu_link = is_cpu_interconnect(s.type);
  if (j.contains("count") && (s.type == LinkType::pcie || cpu_link)) {
    c.fail(entry, std::string("\"count\" does not apply to a ") + std::string(name_of(s.type)) + " link; " +
                      (cpu_link ? "remove it (a socket link is one figure per socket pair)" : "give its \"width\" in lanes"));
  }
  if (j.contains("width") && s.type != LinkType::pcie) {
    c.fail(entry, std::string("\"width\" applies to PCIe links only; ") +
                      (cpu_link ? "remove it" : "give the number of links or ports as \"count\""));
  }
  s.count = get_count(c, j, entry, "count", 1, 1, kMaxLinkCount);
  s.width = get_count(c, j, entry, "width", 16, 1, kMaxLinkWidth);
  if (j.contains("bw_GBps")) s.bw_override_GBps = get_number(c, j, entry, "bw_GBps", 0, kMinFigure, kMaxGBps);
  if (!figures_of(s)) {
    c.fail(entry, "unknown generation '" + s.generation + "' for " + std::string(name_of(s.type)) + "; use one of " + generations_of(s.type));
  }
  // PCIe links are x1, x2, x4, x8 or x16 (PCI Express Base Specification); any other width is a
  // typo the bandwidth would silently scale by.
  if (s.type == LinkType::pcie && (s.width > 16 || (s.width & (s.width - 1)) != 0)) {
    c.fail(entry, "\"width\" is " + std::to_string(s.width) + "; a PCIe link is 1, 2, 4, 8 or 16 lanes wide");
  }
  return s;
}

void check_link_ends(const Ctx& c, const Machine& m, const Link& l, const std::string& entry) {
  if (const std::string problem = link_ends_problem(m, l); !problem.empty()) c.fail(entry, problem);
}

// "peer_access": [{"between": ["gpu0", "gpu2"], "p2p": false}, ...]: pairs whose peer access
// differs from their GPUs'. Each names two distinct GPUs of the node, once; "nvlink" needs an
// NVLink/xGMI route between them.
void parse_pair_access(const Ctx& c, const json& list, Machine& m) {
  if (!list.is_array()) c.fail("peer_access", "must be an array of {\"between\": [gpu, gpu], \"p2p\": ...}");
  for (std::size_t i = 0; i < list.size(); ++i) {
    const json& j = list[i];
    std::string entry = "peer_access[" + std::to_string(i) + "]";
    if (!j.is_object() || !j.contains("between") || !j["between"].is_array() || j["between"].size() != 2 ||
        !j["between"][0].is_string() || !j["between"][1].is_string()) {
      c.fail(entry, "needs \"between\": [\"a\", \"b\"], two GPU ids");
    }
    const std::string a = j["between"][0].get<std::string>(), b = j["between"][1].get<std::string>();
    entry += " (" + a + "-" + b + ")";
    check_keys(c, j, entry, {"between", "p2p"});
    int v[2] = {m.find_vertex(a), m.find_vertex(b)};
    for (int k = 0; k < 2; ++k) {
      const std::string& id = k == 0 ? a : b;
      if (v[k] < 0 || !m.is_kind(v[k], DeviceKind::gpu)) {
        c.fail(entry, "'" + id + "' is not a GPU of this machine; a pair names two declared GPUs");
      }
    }
    if (v[0] == v[1]) c.fail(entry, "names '" + a + "' twice; a pair is two different GPUs");
    if (!j.contains("p2p")) c.fail(entry, "missing \"p2p\"; say true, false or \"nvlink\"");
    const PeerAccess access = parse_peer_access(c, j["p2p"], entry);
    const auto key = std::make_pair(std::min(v[0], v[1]), std::max(v[0], v[1]));
    if (m.pair_access.count(key) != 0) c.fail(entry, "the pair is listed twice; keep one entry");
    m.pair_access[key] = access;
    // "nvlink" with no NVLink/xGMI route (direct or through NVSwitches) would leave the pair on host memory.
    if (access == PeerAccess::fabric && RouteFinder(m, P2P::on).route(v[0], v[1]).through_host) {
      c.fail(entry, "\"p2p\" is \"nvlink\" but no NVLink/xGMI joins these GPUs; add the bridge's link or say true or false");
    }
  }
}

// One node's entries within kMaxGpusPerNode, kMaxVerticesPerNode and kMaxLinksPerNode, checked
// before any is parsed.
void check_size(const Ctx& c, const json& doc) {
  std::size_t gpus = 0;
  // Only counted here: an entry whose "kind" is missing or not text is reported by parse_device.
  for (const auto& d : doc["devices"]) {
    const auto kind = d.is_object() ? d.find("kind") : d.end();
    gpus += kind != d.end() && kind->is_string() && *kind == "gpu" ? 1 : 0;
  }
  const std::string more = "; a node of more is not a real machine (the largest NVLink domain has 256 GPUs): "
                           "describe one node and set \"nodes\" for more";
  if (gpus > static_cast<std::size_t>(kMaxGpusPerNode)) {
    c.fail("devices", std::to_string(gpus) + " GPUs in one node, more than " + std::to_string(kMaxGpusPerNode) + more);
  }
  const std::size_t switches = doc.contains("switches") && doc["switches"].is_array() ? doc["switches"].size() : 0;
  if (doc["devices"].size() + switches > static_cast<std::size_t>(kMaxVerticesPerNode)) {
    c.fail("devices", std::to_string(doc["devices"].size() + switches) + " devices and switches in one node, more than " +
                          std::to_string(kMaxVerticesPerNode) + more);
  }
  if (doc.contains("links") && doc["links"].is_array() && doc["links"].size() > static_cast<std::size_t>(kMaxLinksPerNode)) {
    c.fail("links", std::to_string(doc["links"].size()) + " links in one node, more than " +
                        std::to_string(kMaxLinksPerNode) + more);
  }
}

}  // namespace

Machine parse_machine(const json& doc, const std::string& origin) {
  Ctx c{origin};
  if (!doc.is_object()) c.fail("top level", "must be an object with \"name\", \"devices\" and \"links\"");
  const std::string format = get_string(c, doc, "top level", "format", false);
  if (format == kFormat1) c.version = 1;
  else if (format != kFormat) {
    c.fail("top level", "\"format\" is " + (doc.contains("format") ? "'" + format + "'" : std::string("missing")) +
                            "; a machine file starts with \"format\": \"" + kFormat + "\" (docs/machine-format.md)");
  }
  check_keys(c, doc, "top level",
             {"format", "name", "title", "sources", "nodes", "devices", "switches", "links", "peer_access", "network", "slurm"});
  Machine m;
  m.origin = origin;
  m.name = get_string(c, doc, "top level", "name", true);
  m.title = get_string(c, doc, "top level", "title", false);
  if (doc.contains("sources")) {
    for (const auto& s : doc["sources"]) m.sources.push_back(s.is_string() ? s.get<std::string>() : s.dump());
  }
  m.nodes = get_count(c, doc, "top level", "nodes", 1, 1, kMaxNodes);
  if (!doc.contains("devices") || !doc["devices"].is_array()) c.fail("top level", "missing \"devices\" (an array)");
  check_size(c, doc);
  std::set<std::string> ids;
  std::map<std::string, int> guessed;  // architecture -> GPUs given it from their model names
  for (std::size_t i = 0; i < doc["devices"].size(); ++i) {
    const std::string entry = "devices[" + std::to_string(i) + "]";
    bool arch_guessed = false;
    Device d = parse_device(c, doc["devices"][i], entry, arch_guessed);
    if (!ids.insert(d.id).second) c.fail(entry, "duplicate id '" + d.id + "'; ids must be unique");
    if (arch_guessed) ++guessed[std::string(name_of(*d.arch))];
    m.devices.push_back(std::move(d));
  }
  if (!guessed.empty()) {
    std::string as;
    for (const auto& [arch, n] : guessed) as += (as.empty() ? "" : ", ") + std::to_string(n) + " as " + arch;
    m.warnings.push_back(origin + ": format 1 gives no GPU \"arch\", so it was taken from the model names, volta where "
                         "a name is not known (" + as +
                         "); add \"arch\" to each GPU and write \"format\": \"" + kFormat + "\"");
  }
  if (doc.contains("switches")) {
    for (std::size_t i = 0; i < doc["switches"].size(); ++i) {
      const std::string entry = "switches[" + std::to_string(i) + "]";
      const json& j = doc["switches"][i];
      if (!j.is_object()) c.fail(entry, "must be an object");
      Switch s;
      s.id = get_id(c, j, entry);
      check_keys(c, j, entry + " (" + s.id + ")", {"id", "kind"});
      const std::string kind = get_string(c, j, entry, "kind", true);
      if (kind == "pcie") s.kind = SwitchKind::pcie;
      else if (kind == "nvswitch") s.kind = SwitchKind::nvswitch;
      else c.fail(entry + " (" + s.id + ")", "unknown switch kind '" + kind + "'; use pcie or nvswitch");
      if (!ids.insert(s.id).second) c.fail(entry, "duplicate id '" + s.id + "'; ids must be unique");
      m.switches.push_back(std::move(s));
    }
  }
  if (!doc.contains("links") || !doc["links"].is_array()) c.fail("top level", "missing \"links\" (an array)");
  std::map<std::string, int> vertex_of;
  for (int v = 0; v < m.vertex_count(); ++v) vertex_of.emplace(m.vertex_id(v), v);
  auto find = [&](const std::string& id) { const auto it = vertex_of.find(id); return it == vertex_of.end() ? -1 : it->second; };
  // (type, lower vertex, higher vertex) -> the entry that first joined them.
  std::map<std::tuple<LinkType, int, int>, std::size_t> first_link;
  for (std::size_t i = 0; i < doc["links"].size(); ++i) {
    const json& j = doc["links"][i];
    std::string entry = "links[" + std::to_string(i) + "]";
    if (!j.is_object() || !j.contains("between") || !j["between"].is_array() || j["between"].size() != 2 ||
        !j["between"][0].is_string() || !j["between"][1].is_string()) {
      c.fail(entry, "needs \"between\": [\"a\", \"b\"], two device or switch ids");
    }
    const std::string a = j["between"][0], b = j["between"][1];
    entry += " (" + a + "-" + b + ")";
    check_keys(c, j, entry, {"between", "type", "gen", "count", "width", "bw_GBps", "host_bridge"});
    Link l;
    l.a = find(a);
    l.b = find(b);
    for (const auto& [v, id] : {std::pair{l.a, a}, std::pair{l.b, b}}) {
      if (v < 0) c.fail(entry, "'" + id + "' is not a device or switch of this machine; declare it or fix the id");
    }
    if (l.a == l.b) c.fail(entry, "joins '" + a + "' to itself");
    l.spec = parse_spec(c, j, entry);
    l.figures = *figures_of(l.spec);
    check_link_ends(c, m, l, entry);
    // A second entry of one type between the same two ends was added up for some types and ignored
    // for others (puhti's gpu0-gpu1 NVLink listed twice doubled its bandwidth): one entry, its count.
    const auto [first, added] = first_link.emplace(std::make_tuple(l.spec.type, std::min(l.a, l.b), std::max(l.a, l.b)), i);
    if (!added) {
      c.fail(entry, "a second " + std::string(name_of(l.spec.type)) + " link between " + a + " and " + b + " (links[" +
                        std::to_string(first->second) + "] is the first); give one entry with its " +
                        (l.spec.type == LinkType::pcie ? "width" : "count"));
    }
    if (j.contains("host_bridge")) {
      l.host_bridge = get_string(c, j, entry, "host_bridge", true);
      const bool to_cpu = m.is_kind(l.a, DeviceKind::cpu) || m.is_kind(l.b, DeviceKind::cpu);
      if (l.spec.type != LinkType::pcie || !to_cpu || l.host_bridge.empty()) {
        c.fail(entry, "\"host_bridge\" names the PCIe host bridge a PCIe link enters its CPU through; give a "
                      "non-empty name on a PCIe link to a CPU, or remove it");
      }
    }
    m.links.push_back(l);
  }
  // A switch joins devices; one with no link (an NVSwitch left out of the NVLink entries) is a
  // mistake that would leave its GPUs' bandwidth short without a word.
  std::vector<bool> linked(static_cast<std::size_t>(m.vertex_count()), false);
  for (const Link& l : m.links) linked[static_cast<std::size_t>(l.a)] = linked[static_cast<std::size_t>(l.b)] = true;
  for (std::size_t s = 0; s < m.switches.size(); ++s) {
    if (!linked[m.devices.size() + s]) {
      c.fail("switches[" + std::to_string(s) + "] (" + m.switches[s].id + ")",
             "no link joins it; link it to its devices or remove it");
    }
  }
  // The host's CPU: routes to host memory (P2P off, GPUs without peer access) and every device's
  // CPU affinity end there; a machine without one cannot be priced or shown.
  if (m.cpus().empty()) {
    c.fail("devices", "no CPU; a machine needs its host's CPU (routes to host memory, CPU affinity): add one (kind \"cpu\") "
                      "and link its devices to it");
  }
  if (const Unreached u = unreached_gpu(m); !u.entry.empty()) c.fail(u.entry, u.problem);
  check_routes_to_cpus(m);
  if (doc.contains("peer_access")) parse_pair_access(c, doc["peer_access"], m);
  if (doc.contains("network")) {
    const json& j = doc["network"];
    check_keys(c, j, "network", {"type", "gen", "count", "width", "bw_GBps", "topology", "efficiency"});
    Network n;
    n.port = parse_spec(c, j, "network");
    if (!is_network(n.port.type)) c.fail("network", "type must be infiniband or ethernet");
    n.topology = get_string(c, j, "network", "topology", false);
    if (n.topology.empty()) n.topology = "fat-tree";
    // The model prices a non-blocking fabric; a file naming another would be priced as one silently.
    if (n.topology != "fat-tree") {
      c.fail("network", "\"topology\" is \"" + n.topology +
                            "\"; the model prices a non-blocking fat-tree only: give \"fat-tree\" or leave it out");
    }
    if (j.contains("efficiency")) {
      const json& v = j["efficiency"];
      if (!v.is_number() || !(v.get<double>() >= kMinNetworkEfficiency && v.get<double>() <= 1.0)) {
        c.fail("network", "\"efficiency\" is " + v.dump() + "; give the share of the NIC's figure the transport reaches, "
                          "from 0.01 to 1 (1: InfiniBand RDMA, NCCL's own figure)");
      }
      n.efficiency = v.get<double>();
    }
    m.network = n;
    if (m.nics().empty()) c.fail("network", "a network needs at least one NIC device (kind \"nic\") in the node");
  } else if (m.nodes > 1) {
    c.fail("top level", "\"nodes\" is " + std::to_string(m.nodes) + " but there is no \"network\" joining them");
  }
  return m;
}

Machine load_machine_file(const std::string& path) {
  check_input_file(path, "machine file", "machine");
  std::ifstream in(path);
  if (!in) throw_input(path + ": cannot open the machine file; check the path (or use a catalog machine's name)");
  std::error_code ec;
  const auto bytes = static_cast<long long>(std::filesystem::file_size(path, ec));
  if (!ec && bytes > kMaxMachineFileBytes) {
    throw_input(path + ": " + std::to_string(bytes >> 20) + " MiB, larger than a machine file can be (" +
                std::to_string(kMaxMachineFileBytes >> 20) + " MiB); describe one node and set \"nodes\" for more");
  }
  json doc;
  try {
    doc = parse_json_text(in);
  } catch (const JsonTextError& e) {
    throw_input(path + ": not valid JSON (" + std::string(e.what()) + ")");
  }
  return parse_machine(doc, path);
}

json to_json(const Machine& m) {
  json j;
  j["name"] = m.name;
  j["title"] = m.title;
  j["origin"] = m.origin;
  j["nodes"] = m.nodes;
  j["sources"] = m.sources;
  for (const auto& d : m.devices) {
    const char* kind = d.kind == DeviceKind::gpu ? "gpu" : d.kind == DeviceKind::cpu ? "cpu" : "nic";
    json dj{{"id", d.id}, {"kind", kind}, {"model", d.model}};
    if (d.arch) dj["arch"] = name_of(*d.arch);
    if (d.fp32_tflops > 0) dj["fp32_tflops"] = d.fp32_tflops;
    if (d.fp16_tflops > 0) dj["fp16_tflops"] = d.fp16_tflops;
    if (d.mem_bw_GBps > 0) dj["mem_bw_GBps"] = d.mem_bw_GBps;
    if (d.memory_GiB > 0) dj["memory_GiB"] = d.memory_GiB;
    if (d.cores > 0) dj["cores"] = d.cores;
    if (!d.generation.empty()) dj["generation"] = d.generation;
    if (d.p2p != PeerAccess::all) dj["p2p"] = peer_access_json(d.p2p);
    j["devices"].push_back(dj);
  }
  j["switches"] = json::array();
  for (const auto& s : m.switches) j["switches"].push_back({{"id", s.id}, {"kind", s.kind == SwitchKind::pcie ? "pcie" : "nvswitch"}});
  for (const auto& l : m.links) {
    j["links"].push_back({{"between", {m.vertex_id(l.a), m.vertex_id(l.b)}},
                          {"type", name_of(l.spec.type)},
                          {"gen", l.spec.generation},
                          {"count", l.spec.count},
                          {"width", l.spec.width},
                          {"peak_GBps", l.figures.peak_GBps},
                          {"model_GBps", l.figures.model_GBps}});
    if (!l.host_bridge.empty()) j["links"].back()["host_bridge"] = l.host_bridge;
  }
  for (const auto& [pair, access] : m.pair_access) {
    j["peer_access"].push_back({{"between", {m.vertex_id(pair.first), m.vertex_id(pair.second)}}, {"p2p", peer_access_json(access)}});
  }
  if (m.network) {
    j["network"] = {{"type", name_of(m.network->port.type)}, {"gen", m.network->port.generation},
                    {"count", m.network->port.count}, {"topology", m.network->topology},
                    {"efficiency", m.network->efficiency}};
  }
  return j;
}

}  // namespace scalelab::topo
