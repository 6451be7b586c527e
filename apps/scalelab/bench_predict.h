// `scalelab bench --predict [--machine this|NAME|FILE] [--profile FILE]`: the cost model's
// prediction beside every measured size (the benchmark's predictor hook, bench/options.h), and
// a summary of the errors (median and max |error|). On "this" machine CPU ranks (--backend mpi)
// are priced from the calibrated profile (scalelab calibrate), also where the machine has GPUs,
// and GPU ranks (--backend nccl) over its detected GPUs; on a catalog machine the ranks are its
// GPUs. cmd_bench.cpp calls these functions and nothing else of the model.
#pragma once
#include <memory>
#include <optional>
#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

#include "bench/options.h"
#include "cli.h"
#include "comm/communicator.h"

namespace scalelab::model {
class Predictor;
}

namespace scalelab::cli {

struct PredictRequest {
  bool enabled = false;
  std::string machine = "this";
  std::string profile;  // empty: the default profile path
  // The benchmark's buffers are on GPUs (--backend nccl). On "this" machine CPU ranks are priced
  // from the calibration profile even where the machine has GPUs; GPU ranks over its topology.
  bool gpu_ranks = false;
};

// Registers --predict, --machine and --profile.
void add_predict_options(po::options_description& opts);
[[nodiscard]] PredictRequest predict_request(const po::variables_map& vm, bool gpu_ranks);

class BenchPrediction {
 public:
  // nullptr when the request is not enabled. Errors (no profile, unknown machine) are input errors.
  static std::shared_ptr<BenchPrediction> make(const PredictRequest& r, int nranks);
  [[nodiscard]] bench::Predictor hook() const;
  // CPU ranks: the memory-traffic limit per case (an empty hook on GPUs).
  [[nodiscard]] bench::Predictor limit_hook() const;
  // "# prediction (model: ...): median |error| 4.1%, max 9.8% over 11 sizes"
  void print_summary(std::ostream& out, const bench::BenchResult& result) const;
  [[nodiscard]] nlohmann::json summary_json(const bench::BenchResult& result) const;
  // CPU ranks on one node, with a profile that has the flag round: times it again now
  // (collective), so that the summary can say when the machine is no longer in the state it was
  // calibrated in (its cores farther apart or nearer than then by more than 2x).
  void check_machine_state(comm::Communicator& comm);
  // The same round again once the sweep has ended (collective): a machine that changed state
  // while it was measured gives a benchmark of two machines, and the summary says so.
  void check_machine_state_after(comm::Communicator& comm);

 private:
  std::shared_ptr<model::Predictor> predictor_;
  double flag_round_calibrated_s_ = 0;  // the profile's shm_sync_s (0: not measured)
  double flag_round_calibration_start_s_ = 0;  // the profile's shm_sync_start_s (0: not measured)
  double flag_round_now_s_ = 0;         // measured by check_machine_state (0: not measured)
  double flag_round_after_s_ = 0;       // measured by check_machine_state_after (0: not measured)
};

}  // namespace scalelab::cli
