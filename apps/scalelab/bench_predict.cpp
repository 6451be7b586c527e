// bench --predict (see bench_predict.h).
#include "bench_predict.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "core/error.h"
#include "core/stats.h"
#include "machine_arg.h"
#include "model/calibrate.h"
#include "model/predict.h"
#include "model/profile.h"
#include "topo/catalog.h"

namespace scalelab::cli {

void add_predict_options(po::options_description& opts) {
  opts.add_options()
      ("predict", po::bool_switch(), "print the cost model's prediction and its error beside each size")
      ("machine", po::value<std::string>()->default_value("this"), "--predict: this (CPU ranks, calibrated), a catalog machine or a machine file")
      ("profile", po::value<std::string>()->default_value(""), "--predict on this machine, and --algo auto: calibration profile (default ~/.cache/scalelab/this-machine.json)");
}

namespace {

// Whether the prediction prices CPU ranks from the calibration profile (bench_predict.h).
bool prices_cpu_ranks(const PredictRequest& r, const topo::Machine& m) {
  return m.gpus().empty() || (r.machine == "this" && !r.gpu_ranks);
}

}  // namespace

PredictRequest predict_request(const po::variables_map& vm, bool gpu_ranks) {
  PredictRequest r;
  r.gpu_ranks = gpu_ranks;
  r.enabled = vm["predict"].as<bool>();
  r.machine = vm["machine"].as<std::string>();
  r.profile = vm["profile"].as<std::string>();
  if (!r.enabled && !vm["machine"].defaulted()) {
    throw_usage("--machine " + r.machine + ": names the machine --predict prices; add --predict, or leave it out");
  }
  if (r.enabled) {
    // Check the machine and the profile now, before any rank starts: one line, exit 2.
    const topo::Machine m = load_machine(r.machine);
    if (prices_cpu_ranks(r, m)) (void)model::load_profile(r.profile.empty() ? model::default_profile_path() : r.profile);
    else if (!r.profile.empty()) {
      throw_usage("--profile " + r.profile + ": calibrates CPU ranks of this machine, not the GPUs of " + r.machine + "; leave it out");
    }
  }
  return r;
}

std::shared_ptr<BenchPrediction> BenchPrediction::make(const PredictRequest& r, int nranks) {
  if (!r.enabled) return nullptr;
  auto out = std::make_shared<BenchPrediction>();
  const topo::Machine m = topo::resolve_machine(r.machine);
  if (prices_cpu_ranks(r, m)) {
    const std::string path = r.profile.empty() ? model::default_profile_path() : r.profile;
    model::Profile profile = model::load_profile(path);
    out->flag_round_calibrated_s_ = profile.shm_sync_s;
    out->flag_round_calibration_start_s_ = profile.shm_sync_start_s;
    out->predictor_ = std::make_shared<model::Predictor>(std::move(profile), nranks);
  } else {
    out->predictor_ = std::make_shared<model::Predictor>(m, topo::select_gpus(m, std::to_string(nranks)), topo::P2P::on);
  }
  return out;
}

bench::Predictor BenchPrediction::hook() const {
  auto pr = predictor_;
  return [pr](const bench::CaseKey& k) -> std::optional<double> {
    const auto x = pr->predict(k.collective, k.algorithm, std::nullopt, static_cast<double>(k.size_bytes),
                               /*in_place=*/false, k.shared_buffers);
    if (!(x.time_s >= 0)) return std::nullopt;
    return x.time_s * 1e6;
  };
}

bench::Predictor BenchPrediction::limit_hook() const {
  if (predictor_->on_gpus()) return {};
  auto pr = predictor_;
  return [pr](const bench::CaseKey& k) -> std::optional<double> {
    const auto s = pr->memory_limit_s(k.collective, static_cast<double>(k.size_bytes));
    if (!s) return std::nullopt;
    return *s * 1e6;
  };
}

namespace {
std::vector<double> abs_errors(const bench::BenchResult& result) {
  std::vector<double> e;
  for (const auto& row : result.rows) {
    if (row.predicted_us && row.out_of_place.time_us > 0) {
      e.push_back(std::abs(*row.predicted_us - row.out_of_place.time_us) / row.out_of_place.time_us * 100.0);
    }
  }
  return e;
}
// Per size, the share of the memory-traffic limit the out-of-place measurement reached (%).
std::vector<double> limit_shares(const bench::BenchResult& result) {
  std::vector<double> r;
  for (const auto& row : result.rows) {
    if (row.limit_us && row.out_of_place.time_us > 0) r.push_back(*row.limit_us / row.out_of_place.time_us * 100.0);
  }
  return r;
}
}  // namespace

void BenchPrediction::check_machine_state(comm::Communicator& comm) {
  // The profile's round was timed between 2 ranks; more ranks wait for more peers.
  if (predictor_->on_gpus() || flag_round_calibrated_s_ <= 0 || comm.size() != 2) return;
  flag_round_now_s_ = model::measure_flag_round(comm, /*quick=*/true);
}

void BenchPrediction::check_machine_state_after(comm::Communicator& comm) {
  if (predictor_->on_gpus() || flag_round_calibrated_s_ <= 0 || comm.size() != 2) return;
  flag_round_after_s_ = model::measure_flag_round(comm, /*quick=*/true);
}

void BenchPrediction::print_summary(std::ostream& out, const bench::BenchResult& result) const {
  const auto e = abs_errors(result);
  char line[512];
  if (flag_round_now_s_ > 0 && flag_round_calibrated_s_ > 0) {
    if (!model::same_state(flag_round_now_s_, flag_round_calibrated_s_)) {
      std::snprintf(line, sizeof line,
                    "# warning: a flag round between the ranks takes %.3f us now and took %.3f us at calibration (%.1fx): "
                    "this machine is not in the state it was calibrated in; run 'scalelab calibrate' again before "
                    "judging the model\n",
                    flag_round_now_s_ * 1e6, flag_round_calibrated_s_ * 1e6, flag_round_now_s_ / flag_round_calibrated_s_);
      out << line;
    }
  }
  if (!model::same_state(flag_round_now_s_, flag_round_after_s_)) {
    std::snprintf(line, sizeof line,
                  "# warning: a flag round between the ranks took %.3f us when the benchmark began and %.3f us when it "
                  "ended: this machine changed state while it was measured, so the sizes measured two machines; run "
                  "the benchmark again before judging the model\n",
                  flag_round_now_s_ * 1e6, flag_round_after_s_ * 1e6);
    out << line;
  }
  if (!model::same_state(flag_round_calibration_start_s_, flag_round_calibrated_s_)) {
    std::snprintf(line, sizeof line,
                  "# warning: the profile's flag round took %.3f us when its calibration began and %.3f us when it "
                  "ended: it mixes two states of this machine; run 'scalelab calibrate' again before judging the model\n",
                  flag_round_calibration_start_s_ * 1e6, flag_round_calibrated_s_ * 1e6);
    out << line;
  }
  std::snprintf(line, sizeof line, "# prediction (%s): median |error| %.1f%%, max %.1f%% over %zu sizes (out-of-place)\n",
                predictor_->where().c_str(), e.empty() ? NAN : median(e), e.empty() ? NAN : *std::max_element(e.begin(), e.end()),
                e.size());
  out << line;
  const auto r = limit_shares(result);
  if (!r.empty()) {
    std::snprintf(line, sizeof line,
                  "# memory-traffic limit (calibrated: one core's memcpy, and copying what the other core has just written; "
                  "docs/cost-model.md): reached median %.1f%%, least %.1f%% over "
                  "%zu sizes\n",
                  median(r), *std::min_element(r.begin(), r.end()), r.size());
    out << line;
  }
}

nlohmann::json BenchPrediction::summary_json(const bench::BenchResult& result) const {
  const auto e = abs_errors(result);
  const auto r = limit_shares(result);
  return {{"model", predictor_->on_gpus() ? "nccl-like over the topology" : "calibrated alpha-beta-gamma"},
          {"where", predictor_->where()},
          {"sizes", e.size()},
          {"median_abs_error_pct", e.empty() ? nlohmann::json() : nlohmann::json(median(e))},
          {"max_abs_error_pct", e.empty() ? nlohmann::json() : nlohmann::json(*std::max_element(e.begin(), e.end()))},
          {"memory_limit_reached_median_pct", r.empty() ? nlohmann::json() : nlohmann::json(median(r))},
          {"memory_limit_reached_min_pct", r.empty() ? nlohmann::json() : nlohmann::json(*std::min_element(r.begin(), r.end()))},
          {"flag_round_calibrated_us", flag_round_calibrated_s_ > 0 ? nlohmann::json(flag_round_calibrated_s_ * 1e6) : nlohmann::json()},
          {"flag_round_calibration_start_us",
           flag_round_calibration_start_s_ > 0 ? nlohmann::json(flag_round_calibration_start_s_ * 1e6) : nlohmann::json()},
          {"flag_round_now_us", flag_round_now_s_ > 0 ? nlohmann::json(flag_round_now_s_ * 1e6) : nlohmann::json()},
          {"flag_round_bench_end_us", flag_round_after_s_ > 0 ? nlohmann::json(flag_round_after_s_ * 1e6) : nlohmann::json()}};
}

}  // namespace scalelab::cli
