// NVLink traffic over a run: the difference between two readings of the cumulative throughput
// counters (GpuSampler::nvlink(), taken when monitoring starts and when it stops), per GPU and
// link, as bytes and GB/s (GB = 1e9 bytes). A GPU whose counters the driver does not expose, or
// whose counters went backwards (reset during the run), is reported as "not exposed" with why.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "monitor/sampler.h"

namespace scalelab::monitor {

struct NvLinkLinkTraffic {
  unsigned link = 0;
  std::uint64_t tx_bytes = 0;
  std::uint64_t rx_bytes = 0;
  double tx_GBps = 0;
  double rx_GBps = 0;
};

struct NvLinkTraffic {
  unsigned index = 0;  // the GPU
  bool exposed = false;
  std::string reason;  // when !exposed
  std::vector<NvLinkLinkTraffic> links;
};

// Pairs `before` and `after` by GPU index and link id. A link active at only one of the two
// readings is left out; `seconds` must be positive (the run's length).
[[nodiscard]] std::vector<NvLinkTraffic> nvlink_traffic(const std::vector<NvLinkReading>& before,
                                                        const std::vector<NvLinkReading>& after, double seconds);

// Human-readable lines, one per link ("GPU 0 link 3: tx 1.20 GB (0.10 GB/s), rx ...") or one per
// GPU without counters ("GPU 1: NVLink counters not exposed: ...").
[[nodiscard]] std::string format_nvlink_traffic(const std::vector<NvLinkTraffic>& traffic, double seconds);

void to_json(nlohmann::json& j, const NvLinkTraffic& t);

}  // namespace scalelab::monitor
