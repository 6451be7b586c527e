// Rings over a set of GPUs, the way NCCL builds its channels: search the GPU order whose ring has
// the largest bottleneck bandwidth (links shared by several ring edges split their bandwidth),
// (rings through host memory also share the memory of the CPU they bounce through: each byte is
// written there and read back, so a CPU of mem_bw_GBps carries mem_bw_GBps / 2 of their transfers
// in all), take that ring as one channel, subtract what it uses from every link, and search again on what
// is left. Channels stop when the next ring would be slower than half the first one. With P2P on,
// rings are searched over NVLink/xGMI alone first, and over every link only when those cannot close
// a ring; when the first ring runs over NVLink/xGMI only, later ones may not use PCIe or the host
// (NCCL keeps channels of similar speed and does not mix a PCIe ring into NVLink rings). Ring edges
// between GPUs that meet only at a CPU go through host memory, as NCCL's transports choose
// (routes.h, Transport::nccl).
//
//   RingPlan plan = plan_rings(machine, machine.gpus(), P2P::on);
//   plan.bw_GBps  -> 120 on DGX-1 (two 2-NVLink rings and two 1-NVLink rings, both directions)
#pragma once
#include <array>
#include <string>
#include <vector>

#include "topo/machine.h"
#include "topo/routes.h"

namespace scalelab::topo {

struct RingChannel {
  std::vector<int> order;     // device indices, the ring closes from back() to front()
  std::vector<Route> edges;   // order[i] -> order[i+1]
  double bw_GBps = 0;         // per direction, after sharing
  int bottleneck_link = -1;
  int bottleneck_host = -1;   // the CPU whose memory bounds the channel (bottleneck_link then -1)
};

struct RingPlan {
  std::vector<RingChannel> channels;
  double bw_GBps = 0;                  // sum over channels: each GPU sends this much per second
  std::array<double, 3> hop_latency_us{};  // per Protocol: slowest link class any ring crosses
  int bottleneck_link = -1;            // of the first channel
  int bottleneck_host = -1;            // of the first channel: a CPU's memory instead of a link
  bool through_host = false;
  bool p2p_off = false;                // planned with P2P off (NCCL_P2P_DISABLE=1)
};

// Orders of up to 9 GPUs are searched exhaustively; larger sets start from every GPU and extend
// greedily to the widest next hop. `max_channels` bounds the number of rings.
[[nodiscard]] RingPlan plan_rings(const Machine& m, const std::vector<int>& gpus, P2P p2p, int max_channels = 16);

// "the ring crosses the QPI (broadwell) link between cpu0 and cpu1: 6 GB/s"
[[nodiscard]] std::string describe_bottleneck(const Machine& m, const RingPlan& plan);

}  // namespace scalelab::topo
