// Console table and JSON record of the bandwidth test (see bandwidth_table.h).
#include "gpu/bandwidth_table.h"

#include <cstdio>
#include <string>

#include <nlohmann/json.hpp>

#include "bench/printer.h"
#include "core/size_parse.h"

namespace scalelab::gpu {

namespace {

std::string group_title(CopyKind k, HostMemory m) {
  if (k == CopyKind::d2d) return "D2D (read+write)";
  return std::string(name_of(k)) + " " + std::string(name_of(m));
}

std::vector<report::Column> columns_for(std::size_t kinds) {
  std::vector<report::Column> c{{"size", "(B)", 12}};
  for (std::size_t i = 0; i < kinds; ++i) {
    c.push_back({"time", "(us)", 9});
    c.push_back({"GB/s", "", 9});
  }
  return c;
}

std::vector<report::ColumnGroup> groups_for(const std::vector<std::pair<CopyKind, HostMemory>>& kinds) {
  std::vector<report::ColumnGroup> g;
  for (std::size_t i = 0; i < kinds.size(); ++i) g.push_back({group_title(kinds[i].first, kinds[i].second), 1 + 2 * i, 2});
  return g;
}

std::vector<std::pair<CopyKind, HostMemory>> kinds_of(const BandwidthOptions& o) {
  std::vector<std::pair<CopyKind, HostMemory>> k;
  for (const HostMemory m : {HostMemory::pinned, HostMemory::pageable}) {
    if ((m == HostMemory::pinned && !o.pinned) || (m == HostMemory::pageable && !o.pageable)) continue;
    k.emplace_back(CopyKind::h2d, m);
    k.emplace_back(CopyKind::d2h, m);
  }
  if (o.d2d) k.emplace_back(CopyKind::d2d, HostMemory::none);
  return k;
}

std::string cell(double value, bool known, int precision) { return known ? report::fixed(value, precision) : "-"; }

}  // namespace

BandwidthTable::BandwidthTable(std::ostream& out, const BandwidthOptions& options)
    : out_(out), o_(options), table_(columns_for(kinds_of(options).size()), groups_for(kinds_of(options))) {
  for (const auto& [k, m] : kinds_of(options)) kinds_.push_back({k, m});
}

void BandwidthTable::preamble(const DeviceInfo& d) const {
  char line[512];
  std::snprintf(line, sizeof line, "# scalelab bandwidth: GPU %d of %d, %s (compute capability %s, %.1f GiB, PCI %s)\n",
                d.index, d.device_count, d.name.c_str(), d.compute_capability.c_str(), d.memory_GiB, d.pci_bus_id.c_str());
  out_ << line;
  out_ << "# each figure: " << o_.warmup << " warm-up copies, then " << o_.repeats << " groups of " << o_.iters
       << " copies on one stream between CUDA events; time per copy, median of the groups\n";
  out_ << "# GB/s = 1e9 bytes per second; D2D counts the bytes read AND written (2 x size), as CUDA samples'"
          " bandwidthTest\n";
}

void BandwidthTable::header() const { table_.print_header(out_); }

void BandwidthTable::row(std::uint64_t bytes, const std::vector<CopyPoint>& points) const {
  std::vector<std::string> cells{std::to_string(bytes)};
  for (const auto& k : kinds_) {
    const CopyPoint* p = nullptr;
    for (const auto& q : points) {
      if (q.kind == k.kind && q.host == k.host && q.bytes == bytes) p = &q;
    }
    cells.push_back(p ? bench::format_time_us(p->seconds * 1e6) : "-");
    cells.push_back(cell(p ? p->GBps : 0, p != nullptr, 2));
  }
  table_.print_row(out_, cells);
}

void BandwidthTable::summary(const BandwidthReport& r) const {
  std::string classic;
  for (const auto& k : kinds_) {
    if (const CopyPoint* p = find_point(r, k.kind, k.host, kClassicBytes)) {
      classic += (classic.empty() ? "" : ", ") + group_title(k.kind, k.host) + " " + report::fixed(p->GBps, 1) + " GB/s";
    }
  }
  if (!classic.empty()) out_ << "# at " << format_size(kClassicBytes) << " (bandwidthTest's size): " << classic << "\n";
  if (!o_.peers) return;
  if (r.peers.empty()) {
    out_ << "# peer copies: " << (r.peer_note.empty() ? "none measured" : r.peer_note) << "\n";
    return;
  }
  const int n = r.device.device_count;
  auto matrix = [&](const std::string& title, auto value) {
    char buf[32];
    out_ << "# " << title << "\n#   src\\dst";
    for (int j = 0; j < n; ++j) {
      std::snprintf(buf, sizeof buf, " %8d", j);
      out_ << buf;
    }
    out_ << "\n";
    for (int i = 0; i < n; ++i) {
      std::snprintf(buf, sizeof buf, "#%9d", i);
      out_ << buf;
      for (int j = 0; j < n; ++j) {
        std::string c = "-";
        for (const auto& p : r.peers) {
          if (p.src == i && p.dst == j) c = value(p);
        }
        std::snprintf(buf, sizeof buf, " %8s", c.c_str());
        out_ << buf;
      }
      out_ << "\n";
    }
  };
  const std::string size = format_size(o_.peer_bytes);
  matrix("peer copy bandwidth, " + size + ", GB/s, P2P off (staged through the host)",
         [](const PeerPoint& p) { return report::fixed(p.off_GBps, 2); });
  matrix("peer copy bandwidth, " + size + ", GB/s, P2P on (n/a: cudaDeviceCanAccessPeer says no)",
         [](const PeerPoint& p) { return p.can_access ? report::fixed(p.on_GBps, 2) : std::string("n/a"); });
  matrix("peer copy latency, 4 B, us, P2P off", [](const PeerPoint& p) { return report::fixed(p.off_latency_us, 2); });
  matrix("peer copy latency, 4 B, us, P2P on",
         [](const PeerPoint& p) { return p.can_access ? report::fixed(p.on_latency_us, 2) : std::string("n/a"); });
}

nlohmann::json to_json(const BandwidthReport& r) {
  nlohmann::json points = nlohmann::json::array();
  for (const auto& p : r.points) {
    points.push_back({{"kind", std::string(name_of(p.kind))},
                      {"host_memory", std::string(name_of(p.host))},
                      {"bytes", p.bytes},
                      {"counted_bytes", counted_bytes(p.kind, static_cast<double>(p.bytes))},
                      {"time_us", p.seconds * 1e6},
                      {"min_time_us", p.min_seconds * 1e6},
                      {"GBps", p.GBps}});
  }
  nlohmann::json peers = nlohmann::json::array();
  for (const auto& p : r.peers) {
    peers.push_back({{"src", p.src},
                     {"dst", p.dst},
                     {"can_access_peer", p.can_access},
                     {"p2p_off_GBps", p.off_GBps},
                     {"p2p_on_GBps", p.can_access ? nlohmann::json(p.on_GBps) : nlohmann::json(nullptr)},
                     {"p2p_off_latency_us", p.off_latency_us},
                     {"p2p_on_latency_us", p.can_access ? nlohmann::json(p.on_latency_us) : nlohmann::json(nullptr)}});
  }
  return {{"device",
           {{"index", r.device.index},
            {"name", r.device.name},
            {"pci_bus_id", r.device.pci_bus_id},
            {"compute_capability", r.device.compute_capability},
            {"memory_GiB", r.device.memory_GiB},
            {"device_count", r.device.device_count}}},
          {"protocol",
           {{"warmup", r.warmup},
            {"repeats", r.repeats},
            {"iters", r.iters},
            {"timer", "CUDA events"},
            {"statistic", "median over repeats of the time per copy"},
            {"GB", 1e9},
            {"d2d_counts", "bytes read and written (2 x size)"}}},
          {"points", points},
          {"peers", peers},
          {"peer_note", r.peer_note}};
}

}  // namespace scalelab::gpu
