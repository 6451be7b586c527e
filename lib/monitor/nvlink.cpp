// NVLink counter differences and their report (nvlink.h).
#include "monitor/nvlink.h"

#include <fmt/format.h>

namespace scalelab::monitor {
namespace {

const NvLinkReading* find_gpu(const std::vector<NvLinkReading>& readings, unsigned index) {
  for (const auto& r : readings) {
    if (r.index == index) return &r;
  }
  return nullptr;
}

const NvLinkCounter* find_link(const NvLinkReading& reading, unsigned link) {
  for (const auto& c : reading.links) {
    if (c.link == link) return &c;
  }
  return nullptr;
}

}  // namespace

std::vector<NvLinkTraffic> nvlink_traffic(const std::vector<NvLinkReading>& before,
                                          const std::vector<NvLinkReading>& after, double seconds) {
  std::vector<NvLinkTraffic> out;
  for (const auto& a : after) {
    NvLinkTraffic t;
    t.index = a.index;
    const NvLinkReading* b = find_gpu(before, a.index);
    if (b == nullptr) {
      t.reason = "no reading at the start";
    } else if (!b->exposed || !a.exposed) {
      t.reason = !b->exposed ? b->reason : a.reason;
    } else {
      t.exposed = true;
      for (const auto& end : a.links) {
        const NvLinkCounter* start = find_link(*b, end.link);
        if (start == nullptr) continue;
        if (end.tx_bytes < start->tx_bytes || end.rx_bytes < start->rx_bytes) {
          t.exposed = false;
          t.reason = fmt::format("link {} counters went backwards (reset during the run)", end.link);
          t.links.clear();
          break;
        }
        NvLinkLinkTraffic l;
        l.link = end.link;
        l.tx_bytes = end.tx_bytes - start->tx_bytes;
        l.rx_bytes = end.rx_bytes - start->rx_bytes;
        l.tx_GBps = static_cast<double>(l.tx_bytes) / seconds / 1e9;
        l.rx_GBps = static_cast<double>(l.rx_bytes) / seconds / 1e9;
        t.links.push_back(l);
      }
      if (t.exposed && t.links.empty()) {
        t.exposed = false;
        t.reason = "no NVLink active at both the start and the end";
      }
    }
    out.push_back(std::move(t));
  }
  return out;
}

std::string format_nvlink_traffic(const std::vector<NvLinkTraffic>& traffic, double seconds) {
  std::string s = fmt::format("NVLink data payload over {:.1f} s (NVML throughput counters; GB = 1e9 bytes):\n", seconds);
  for (const auto& t : traffic) {
    if (!t.exposed) {
      s += fmt::format("  GPU {}: NVLink counters not exposed: {}\n", t.index, t.reason);
      continue;
    }
    for (const auto& l : t.links) {
      s += fmt::format("  GPU {} link {:2}: tx {:10.3f} GB ({:8.3f} GB/s)  rx {:10.3f} GB ({:8.3f} GB/s)\n", t.index,
                       l.link, static_cast<double>(l.tx_bytes) / 1e9, l.tx_GBps, static_cast<double>(l.rx_bytes) / 1e9,
                       l.rx_GBps);
    }
  }
  return s;
}

void to_json(nlohmann::json& j, const NvLinkTraffic& t) {
  j = nlohmann::json{{"index", t.index}, {"exposed", t.exposed}};
  if (!t.exposed) j["reason"] = t.reason;
  j["links"] = nlohmann::json::array();
  for (const auto& l : t.links) {
    j["links"].push_back({{"link", l.link},
                          {"tx_bytes", l.tx_bytes},
                          {"rx_bytes", l.rx_bytes},
                          {"tx_GBps", l.tx_GBps},
                          {"rx_GBps", l.rx_GBps}});
  }
}

}  // namespace scalelab::monitor
