// The cost model's front door: predicted time, algbw and busbw of one collective call, on GPUs
// of a machine (NCCL-like model over the topology: model/nccl.h) or on CPU ranks of this machine
// (calibrated profile: model/profile.h, Open MPI's choices: model/openmpi.h), for each algorithm
// of collectives/ ("ring", "tree", ..., "library") or "auto" (on GPUs what NCCL would choose, the
// library; on CPU ranks the fastest of scalelab's algorithms). `scalelab predict`,
// `scalelab bench --predict` and Lab 3 all call this.
//
//   Predictor pr(machine, select_gpus(machine, "8"), topo::P2P::on);
//   Prediction x = pr.predict(Collective::allreduce, "auto", std::nullopt, 64 << 20);
//   x.busbw_GBps, x.algorithm ("library"), x.detail ("NCCL ring, Simple"), pr.bottleneck()
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "collectives/algorithm.h"
#include "collectives/choice.h"
#include "model/nccl.h"
#include "model/profile.h"
#include "topo/catalog.h"
#include "topo/link.h"
#include "topo/routes.h"

namespace scalelab::model {

struct Prediction {
  double time_s = 0;
  double algbw_GBps = 0;
  double busbw_GBps = 0;
  std::string algorithm;  // what was asked; for "auto", "library" on GPUs, the fastest on CPU ranks
  std::string detail;     // how it was modelled: "NCCL ring, LL128", "Open MPI rabenseifner", "calibrated ring"
};

class Predictor {
 public:
  // GPUs of a (catalog or file) machine.
  Predictor(const topo::Machine& m, const topo::GpuSelection& sel, topo::P2P p2p);
  // CPU ranks of this machine, from a calibration profile.
  Predictor(Profile profile, int ranks);

  // `algorithm`: a name from collectives::algorithm_names(c), "auto", or (GPUs) "nvls".
  // Unknown names are usage errors about parameter "algorithm" that list the valid names.
  // shared_buffers (CPU ranks): every rank's buffers are Communicator::shared_buffer memory, which
  // some algorithms read in place (AlgorithmDescriptor::cost_shared).
  [[nodiscard]] Prediction predict(collectives::Collective c, const std::string& algorithm,
                                   std::optional<topo::Protocol> protocol, double bytes, bool in_place = false,
                                   bool shared_buffers = false) const;
  // "auto" for collectives::choose_algorithm: on CPU ranks the fastest algorithm the model predicts
  // among those that can run as the query says (collectives::can_run), priced in place and on
  // shared buffers as it says (its `ranks` is not read: this predictor's); on GPUs "library".
  [[nodiscard]] std::string choose(const collectives::ChoiceQuery& q) const;
  // CPU ranks only: the time an allreduce of `bytes` cannot beat on this machine, the longer of
  //  - its least memory traffic at the calibrated memcpy rate of one core (at the call's
  //    footprint, hot to cold): each rank reads (2p-1)/p and writes 1 byte per byte of the vector
  //    (its slice reduced from every rank's, then the other slices copied in), the traffic of a
  //    memcpy of (3p-1)/(2p) bytes;
  //  - moving what crosses between the cores: (p-1)/p of the vector in each half, at the
  //    calibrated rate of copying what the other rank has just written (Profile::peer_copy;
  //    left out for profiles without it).
  // docs/cost-model.md, "The memory-traffic limit". nullopt on GPUs and for other collectives.
  [[nodiscard]] std::optional<double> memory_limit_s(collectives::Collective c, double bytes) const;
  // The algorithms predict() accepts for a collective ("auto" first); on GPUs, not the host-only
  // ones (AlgorithmDescriptor::host_only), which predict() refuses there with a usage error.
  [[nodiscard]] std::vector<std::string> algorithms(collectives::Collective c) const;
  [[nodiscard]] int ranks() const { return ranks_; }
  [[nodiscard]] bool on_gpus() const { return gpu_.has_value(); }
  [[nodiscard]] const std::string& bottleneck() const { return bottleneck_; }
  [[nodiscard]] const std::string& where() const { return where_; }
  [[nodiscard]] const GpuFabric* fabric() const { return gpu_ ? &*gpu_ : nullptr; }

 private:
  [[nodiscard]] double cpu_time(collectives::Collective c, const std::string& algo, double n, bool in_place,
                                bool shared_buffers,
                                std::string& detail) const;
  [[nodiscard]] double gpu_time(collectives::Collective c, const std::string& algo, std::optional<topo::Protocol> proto,
                                double n, std::string& detail) const;

  std::optional<GpuFabric> gpu_;
  std::optional<Profile> profile_;
  int ranks_ = 0;
  std::string bottleneck_;
  std::string where_;
};

}  // namespace scalelab::model
