// How `scalelab bandwidth` shows a bandwidth report (gpu/bandwidth.h): a preamble naming the GPU
// and the protocol, one row per size as it is measured (time per copy and GB/s for each copy kind
// measured, as bandwidthTest's range mode and nccl-tests print), the classic single 32 MiB figure,
// and p2pBandwidthLatencyTest-style matrices for GPU pairs; and the "scalelab.bandwidth" JSON
// record (docs/results-schema.md). Host code only: tested without a GPU.
//
//   BandwidthTable t(std::cout, options);
//   t.preamble(info); t.header();  ... t.row(bytes, points) per size ...;  t.summary(report);
#pragma once
#include <cstdint>
#include <ostream>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "gpu/bandwidth.h"
#include "report/table.h"

namespace scalelab::gpu {

// The size of the single figure bandwidthTest prints by default.
inline constexpr std::uint64_t kClassicBytes = 32ull << 20;

class BandwidthTable {
 public:
  BandwidthTable(std::ostream& out, const BandwidthOptions& options);
  void preamble(const DeviceInfo& device) const;
  void header() const;
  void row(std::uint64_t bytes, const std::vector<CopyPoint>& points) const;
  // The 32 MiB figures when that size was measured, and the peer matrices (or why there are none).
  void summary(const BandwidthReport& r) const;

 private:
  struct Kind {
    CopyKind kind;
    HostMemory host;
  };
  std::ostream& out_;
  const BandwidthOptions& o_;
  std::vector<Kind> kinds_;  // the table's column groups, in order
  report::ConsoleTable table_;
};

// The records of the "scalelab.bandwidth" schema (version 1): device, protocol, points, peers.
[[nodiscard]] nlohmann::json to_json(const BandwidthReport& r);

}  // namespace scalelab::gpu
