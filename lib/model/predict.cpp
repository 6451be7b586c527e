// Predictor (see predict.h): prices each algorithm with its own cost formula (its descriptor,
// collectives/algorithm.h) over the costs of the place it runs on, or with the model of the
// library that runs it (Open MPI's choices, NCCL's tuner).
#include "model/predict.h"

#include <algorithm>
#include <cstdio>
#include <cmath>
#include <limits>

#include "core/error.h"
#include "model/openmpi.h"

namespace scalelab::model {

namespace {

using collectives::Collective;

// Alpha-beta-gamma costs of GPU point-to-point algorithms: a Simple-protocol hop per message,
// the slowest pair route for the bytes (contention ignored), reductions at memory speed.
class GpuCosts final : public Costs {
 public:
  explicit GpuCosts(const GpuFabric& f)
      : alpha_((f.nodes > 1 ? f.inter_lat_us[2] : f.intra_lat_us[2]) * 1e-6 + 8.4e-6 / 2),
        beta_(1.0 / (std::max(f.pair_min_GBps, 1e-3) * 1e9)),
        gamma_(3.0 / (std::max(f.gpu_mem_GBps, 1.0) * 1e9)) {}
  [[nodiscard]] double message(double bytes) const override { return alpha_ + bytes * beta_; }
  [[nodiscard]] double reduce(double bytes) const override { return bytes * gamma_; }
  [[nodiscard]] double copy(double bytes) const override { return bytes * gamma_ * 2.0 / 3.0; }

 private:
  double alpha_, beta_, gamma_;
};

double footprint(Collective c, double n, int p) {
  switch (c) {
    case Collective::allreduce: return 2 * n;
    case Collective::broadcast: return n;
    case Collective::allgather:
    case Collective::reduce_scatter: return n + n / p;
  }
  return n;
}

}  // namespace

Predictor::Predictor(const topo::Machine& m, const topo::GpuSelection& sel, topo::P2P p2p)
    // On "this" machine the GPU-host links take the calibrated copy figure when the profile has one.
    : gpu_(build_fabric(with_calibrated_host_links(m), sel, p2p)), ranks_(sel.total) {
  bottleneck_ = gpu_->bottleneck;
  where_ = m.name + ", " + std::to_string(sel.total) + " GPU" + (sel.total == 1 ? "" : "s") +
           (sel.nodes > 1 ? " on " + std::to_string(sel.nodes) + " nodes" : "") + (p2p == topo::P2P::off ? ", P2P off" : "");
}

Predictor::Predictor(Profile profile, int ranks) : profile_(std::move(profile)), ranks_(ranks) {
  where_ = "this machine, " + std::to_string(ranks) + " CPU ranks (calibrated on " + profile_->host + ")";
  CpuCosts big(*profile_, 2.0 * (64 << 20));
  char words[256];
  std::snprintf(words, sizeof words,
                "ranks exchange through shared memory: %.3g GB/s per direction for 64 MiB messages, %.3g us for 8 B",
                (64.0 * (1 << 20)) / big.message(64.0 * (1 << 20)) / 1e9, CpuCosts(*profile_, 16).message(8) * 1e6);
  bottleneck_ = words;
}

std::optional<double> Predictor::memory_limit_s(Collective c, double n) const {
  if (!profile_ || c != Collective::allreduce || !(n > 0)) return std::nullopt;
  const double p = ranks_;
  const CpuCosts costs(*profile_, footprint(c, n, ranks_));
  const double traffic = costs.copy(n * (3 * p - 1) / (2 * p));
  if (profile_->peer_copy.empty()) return traffic;  // a profile made before it was measured
  // (p-1)/p of the vector comes from the other cores in each half: the slices to reduce, then
  // the reduced slices.
  const double crossing = 2 * profile_->peer_copy.at(n * (p - 1) / p);
  return std::max(traffic, crossing);
}

std::vector<std::string> Predictor::algorithms(Collective c) const {
  std::vector<std::string> out{"auto"};
  for (const auto& a : collectives::algorithm_names(c)) {
    if (gpu_ && collectives::find_algorithm(c, a).host_only) continue;  // CPU ranks only
    out.push_back(a);
  }
  if (gpu_ && c == Collective::allreduce) out.push_back("nvls");
  return out;
}

std::string Predictor::choose(const collectives::ChoiceQuery& q) const {
  if (gpu_) return "library";
  std::string best;
  double best_s = std::numeric_limits<double>::infinity();
  for (const auto& a : algorithms(q.collective)) {
    if (a == "auto" || !collectives::can_run(collectives::find_algorithm(q.collective, a), q)) continue;
    std::string detail;
    const double t = cpu_time(q.collective, a, q.bytes, q.in_place, q.shared_buffers, detail);
    if (t >= 0 && t < best_s) {
      best_s = t;
      best = a;
    }
  }
  return best;
}

double Predictor::cpu_time(Collective c, const std::string& a, double n, bool in_place, bool shared_buffers,
                           std::string& detail) const {
  const int p = ranks_;
  const CpuCosts measured(*profile_, footprint(c, n, p));
  const collectives::AlgorithmDescriptor& d = collectives::find_algorithm(c, a);
  if (d.is_library()) return openmpi_collective(c, n, p, measured, in_place, detail);
  // In place, the caller has just written the buffer (bench its input, training its gradients),
  // so the output's lines are this rank's own; out of place, a call repeated on the same buffers
  // finds them held by the peer that read them last time (the measured step).
  const collectives::OwnedOutput owned(measured);
  const Costs& costs = in_place ? static_cast<const Costs&>(owned) : measured;
  detail = "calibrated " + a;
  if (shared_buffers && d.cost_shared != nullptr) {
    detail += ", shared buffers";
    return d.cost_shared(n, p, costs);
  }
  return d.cost(n, p, costs);
}

double Predictor::gpu_time(Collective c, const std::string& a, std::optional<topo::Protocol> proto, double n,
                           std::string& detail) const {
  const GpuFabric& f = *gpu_;
  // The library, NVLS, and the point-to-point algorithms that move data as one of NCCL's own
  // (the ring; the tree across nodes) are priced by NCCL's tuning model.
  std::optional<NcclAlgo> na;
  const collectives::AlgorithmDescriptor* d = a == "nvls" ? nullptr : &collectives::find_algorithm(c, a);
  if (d == nullptr) {
    na = f.nodes > 1 ? NcclAlgo::nvls_tree : NcclAlgo::nvls;
  } else if (d->nccl == collectives::NcclAnalogue::ring) {
    na = NcclAlgo::ring;
  } else if (d->nccl == collectives::NcclAnalogue::tree && f.nodes > 1) {
    na = NcclAlgo::tree;
  }
  if (na || d->is_library()) {
    const NcclEstimate e = nccl_best(f, c, n, na, proto);
    if (!e.available) {
      detail = "not available here";
      return std::numeric_limits<double>::quiet_NaN();
    }
    detail = "NCCL " + std::string(name_of(e.algo)) + ", " + std::string(topo::name_of(e.protocol));
    return e.time_s;
  }
  detail = "textbook " + a + ", alpha-beta over the slowest pair route (not an NCCL algorithm)";
  return d->cost(n, f.ranks, GpuCosts(f));
}

Prediction Predictor::predict(Collective c, const std::string& algorithm, std::optional<topo::Protocol> protocol,
                              double bytes, bool in_place, bool shared_buffers) const {
  const auto names = algorithms(c);
  if (std::find(names.begin(), names.end(), algorithm) == names.end()) {
    std::string list;
    for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
    // A name of the table missing from this predictor's list is a host-only algorithm on GPUs.
    const auto all = collectives::algorithm_names(c);
    if (gpu_ && std::find(all.begin(), all.end(), algorithm) != all.end()) {
      throw_parameter(ErrorKind::usage, "algorithm",
                      algorithm + ": runs on CPU ranks only (it reduces in host memory the ranks of a node share); "
                      "on GPUs use one of " + list);
    }
    throw_parameter(ErrorKind::usage, "algorithm",
                    algorithm + ": not an algorithm for " + std::string(collectives::name_of(c)) + "; use one of " + list);
  }
  // On GPUs "auto" is what NCCL would run (its tuner's choice among ring, tree and NVLS: the
  // library); the textbook algorithms are priced only when named. On CPU ranks scalelab runs
  // every algorithm itself, so "auto" is the fastest of them (choose).
  Prediction x;
  x.time_s = std::numeric_limits<double>::infinity();
  x.algorithm = gpu_ && algorithm == "auto" ? std::string("library") : algorithm;
  if (!gpu_ && algorithm == "auto") {
    x.algorithm = choose(collectives::ChoiceQuery{c, bytes, ranks_, in_place, shared_buffers});
    if (x.algorithm.empty()) return x;  // nothing priced here
  }
  x.time_s = gpu_ ? gpu_time(c, x.algorithm, protocol, bytes, x.detail)
                     : cpu_time(c, x.algorithm, bytes, in_place, shared_buffers, x.detail);
  if (x.time_s > 0 && std::isfinite(x.time_s)) {
    x.algbw_GBps = bytes / x.time_s / 1e9;
    x.busbw_GBps = x.algbw_GBps * bus_factor(c, ranks_);
  }
  return x;
}

}  // namespace scalelab::model
