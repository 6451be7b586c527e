// Routes between two devices of a node: the widest path (largest bottleneck bandwidth, then the
// fewest hops) through switches and CPUs, never through another GPU or a NIC. With P2P off
// (NCCL_P2P_DISABLE=1) the data goes through host memory: the route is forced through a CPU and
// uses no NVLink/xGMI. Also the `nvidia-smi topo -m` classification of a pair (X, NV#, PIX, PXB,
// PHB, NODE, SYS).
//
//   Route r = route_between(machine, gpu0, gpu5, P2P::on);
//   r.model_GBps  -> 6 (the route crosses QPI);  describe_bottleneck(machine, r) -> words
//
// Many pairs of one machine: a RouteFinder searches once per source vertex (all destinations at
// once) and keeps the result, so n GPUs cost n searches rather than n^2; its answers are those of
// route_between and classify.
//
//   const RouteFinder routes(machine, P2P::on);
//   routes.route(gpu0, gpu5).model_GBps;  routes.classify(gpu0, gpu5).label
#pragma once
#include <array>
#include <map>
#include <memory>
#include <string>
#include <tuple>
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
  double copy_GBps = 0;       // a peer copy: the links' copy figures' bottleneck; through host memory, staged (see routes.cpp)
  std::array<double, 3> latency_us{};  // per Protocol: the slowest link class on the route
  int bottleneck_link = -1;   // index into machine.links, -1 for an empty route
  bool through_host = false;  // bounced through host memory (P2P off)
  int host = -1;              // the CPU whose memory holds the bounce buffer
};

// What a pair of devices can use at once: one route, or, where the route runs through NVSwitches,
// every switch the two GPUs share (a peer copy and NCCL's channels spread over all of them, as
// nvidia-smi's NV# counts their links). DGX A100 gpu0-gpu1: 6 switches x 40 = 240 GB/s collective,
// where one route through one switch carries 40.
struct PairBandwidth {
  double model_GBps = 0;  // the links' model (collective) figures, added over the paths
  double copy_GBps = 0;   // a peer copy's rate, added over the paths
  int paths = 1;          // parallel paths counted (switches shared), 1 for a single route
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

// Routes and classes of many pairs of one machine (see the top of this file). The machine must
// outlive the finder; a finder is not safe to use from several threads at once (it caches).
//
// How two GPUs with peer access exchange data: `peer`, over any path (a peer copy,
// p2pBandwidthLatencyTest); `nccl`, as NCCL's transports do: peer access over NVLink/xGMI and
// PCIe switches only (NCCL's default P2P level, PXB), through host memory (its SHM transport)
// where the path crosses a CPU, except on AMD hosts in a job of at most two GPUs (NCCL's level is
// SYS there: `job_gpus`).
enum class Transport { peer, nccl };

class RouteFinder {
 public:
  RouteFinder(const Machine& m, P2P p2p, Capacities cap = {}, Transport transport = Transport::peer, int job_gpus = 0);
  ~RouteFinder();
  RouteFinder(const RouteFinder&) = delete;
  RouteFinder& operator=(const RouteFinder&) = delete;
  // route_between(m, from, to, p2p, cap).
  [[nodiscard]] Route route(int from, int to) const;
  // classify(m, a, b) (independent of p2p and cap).
  [[nodiscard]] PairClass classify(int a, int b) const;
  // The pair's bandwidth over every path it can use at once (PairBandwidth above); the route's
  // own figures where it does not run through NVSwitches, or with P2P off.
  [[nodiscard]] PairBandwidth pair(int from, int to) const;

  struct Search;  // one source's widest-path labels (routes.cpp)

 private:
  enum class Filter { all, fabric, no_fabric };
  // `model`: on the links' model figures rather than cap_ (classify); cap_ empty is the same.
  const Search& search(int from, Filter f, bool model) const;
  [[nodiscard]] Route extract(const Search& s, int from, int to, bool model) const;

  const Machine& m_;
  P2P p2p_;
  Capacities cap_;
  bool shm_through_cpu_ = false;  // Transport::nccl, and NCCL's P2P level stops short of the CPU
  std::vector<std::vector<int>> adjacent_;  // per vertex, its links in file order
  bool xgmi_ = false;                        // any GPU-fabric link is xGMI
  mutable std::map<std::tuple<int, Filter, bool>, std::unique_ptr<Search>> searches_;
};
// The legend printed under the matrix.
[[nodiscard]] std::string matrix_legend();

// "the route crosses the QPI (broadwell) link between cpu0 and cpu1: 6 GB/s"
[[nodiscard]] std::string describe_link(const Machine& m, int link);
[[nodiscard]] std::string describe_route(const Machine& m, const Route& r);  // "gpu0 -> plx0 -> cpu0 -> ..."

}  // namespace scalelab::topo
