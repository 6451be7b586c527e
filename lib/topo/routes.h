// Routes between two devices of a node: the widest path (largest bottleneck bandwidth, then the
// fewest hops) through switches and CPUs, never through another GPU or a NIC. With P2P off
// (NCCL_P2P_DISABLE=1) the data goes through host memory: the route is forced through a CPU and
// uses no NVLink/xGMI. Also the `nvidia-smi topo -m` classification of a pair (X, NV#, PIX, PXB,
// PHB, NODE, SYS).
//
//   Route r = route_between(machine, gpu0, gpu5, P2P::on);
//   r.model_GBps  -> 6 (the route crosses QPI);  describe_bottleneck(machine, r) -> words
#pragma once
#include <array>
#include <string>
#include <vector>

#include "topo/machine.h"

namespace scalelab::topo {

enum class P2P { on, off };

struct Route {
  int from = -1, to = -1;
  std::vector<int> vertices;  // from ... to
  std::vector<int> links;     // one per hop
  std::vector<bool> forward;  // hop goes a -> b of its link
  double model_GBps = 0;      // bottleneck of the links' model figures (pipelined transfer)
  double peak_GBps = 0;       // bottleneck of the links' peak figures
  double copy_GBps = 0;       // a peer copy: peak bottleneck; through host memory, staged (see routes.cpp)
  std::array<double, 3> latency_us{};  // per Protocol: the slowest link class on the route
  int bottleneck_link = -1;   // index into machine.links, -1 for an empty route
  bool through_host = false;  // bounced through host memory (P2P off)
  int host = -1;              // the CPU whose memory holds the bounce buffer
};

// Directed capacity of every link: index 2*link for a->b, 2*link+1 for b->a. The ring search
// passes what is left after earlier channels; empty means the links' model figures.
using Capacities = std::vector<double>;
[[nodiscard]] Capacities model_capacities(const Machine& m);

// The widest route from vertex `from` to vertex `to`. Throws an input error when none exists.
[[nodiscard]] Route route_between(const Machine& m, int from, int to, P2P p2p, const Capacities& cap = {});

// `nvidia-smi topo -m` class of a pair of devices.
enum class PathClass { self, nvlink, pix, pxb, phb, node, sys };
struct PairClass {
  PathClass cls = PathClass::sys;
  std::string label;  // "X", "NV2", "XG4", "PIX", "PXB", "PHB", "NODE", "SYS"
};
[[nodiscard]] PairClass classify(const Machine& m, int a, int b);
// The legend printed under the matrix.
[[nodiscard]] std::string matrix_legend();

// "the route crosses the QPI (broadwell) link between cpu0 and cpu1: 6 GB/s"
[[nodiscard]] std::string describe_link(const Machine& m, int link);
[[nodiscard]] std::string describe_route(const Machine& m, const Route& r);  // "gpu0 -> plx0 -> cpu0 -> ..."

}  // namespace scalelab::topo
