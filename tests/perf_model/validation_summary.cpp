// Judges the cost model over several calibrate-then-benchmark rounds on this machine.
//
// One round is `scalelab calibrate` followed by `scalelab bench allreduce --predict --json`, which
// records, per size, the measured time (median over iterations) and the time predicted from that
// round's profile. One round alone is at the mercy of the machine's state during those seconds;
// this program takes, per size, the median over rounds of the measured time and of the predicted
// time, and reports the error between the two, then median and max |error| over sizes. It also
// prints each round's own summary, so the spread between rounds is visible beside the verdict.
// A round whose flag rounds (bench --predict records them: at the calibration's start and end, and
// when the benchmark began and ended) are not all within 2x of each other measured a machine that
// changed state between calibration and benchmark, or during either (a virtual machine's cores
// moved): it is shown but left out of the medians and the verdict. Records made before the
// benchmark's end was timed lack that round, and are judged on the other three.
//
//   validation_summary [--max-median PCT --max-max PCT] ring-1.json ring-2.json ...
// (validate_this_machine.sh runs the rounds and calls it once per algorithm.) With --max-median
// and --max-max the exit status says whether the bar held (0) or not (1).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/results.h"
#include "core/stats.h"
#include "model/profile.h"

namespace {

struct Round {
  std::string path;
  std::map<long long, std::pair<double, double>> rows;  // size -> (measured us, predicted us)
  double flag_start_us = 0, flag_end_us = 0, flag_bench_us = 0, flag_bench_end_us = 0;  // 0: not recorded
  [[nodiscard]] bool one_state() const {
    using scalelab::model::same_state;
    const double f[] = {flag_start_us, flag_end_us, flag_bench_us, flag_bench_end_us};
    for (double a : f) {
      for (double b : f) {
        if (!same_state(a, b)) return false;
      }
    }
    return true;
  }
};

double flag(const nlohmann::json& prediction, const char* key) {
  const auto it = prediction.find(key);
  return it == prediction.end() || !it->is_number() ? 0.0 : it->get<double>();
}

Round read_round(const std::string& path) {
  const nlohmann::json doc = scalelab::read_json_file(path);
  Round r;
  r.path = path;
  try {
    for (const auto& run : doc.at("runs")) {
      if (const auto p = run.find("prediction"); p != run.end() && p->is_object()) {
        r.flag_start_us = flag(*p, "flag_round_calibration_start_us");
        r.flag_end_us = flag(*p, "flag_round_calibrated_us");
        r.flag_bench_us = flag(*p, "flag_round_now_us");
        r.flag_bench_end_us = flag(*p, "flag_round_bench_end_us");
      }
      for (const auto& row : run.at("results")) {
        if (row.at("predicted_us").is_null()) continue;
        r.rows[row.at("size_bytes").get<long long>()] = {row.at("out_of_place").at("time_us").get<double>(),
                                                          row.at("predicted_us").get<double>()};
      }
    }
  } catch (const nlohmann::json::exception& e) {
    scalelab::throw_input(path + ": not a scalelab bench record (" + e.what() + "); give the files of bench --json");
  }
  if (r.rows.empty()) scalelab::throw_input(path + ": no row has a prediction; run bench with --predict --json");
  return r;
}

double pct(double predicted, double measured) { return (predicted - measured) / measured * 100.0; }

}  // namespace

int main(int argc, char** argv) {
  using namespace scalelab;
  try {
    double max_median = -1, max_max = -1;
    std::vector<Round> all, rounds;  // rounds: those in one state, which are judged
    for (int i = 1; i < argc; ++i) {
      const std::string a = argv[i];
      if ((a == "--max-median" || a == "--max-max") && i + 1 < argc) {
        (a == "--max-median" ? max_median : max_max) = std::atof(argv[++i]);
      } else {
        all.push_back(read_round(a));
      }
    }
    if (all.empty()) throw_usage("validation_summary: give the bench --json files of each round");
    for (const Round& r : all) {
      if (r.one_state()) rounds.push_back(r);
    }
    for (const Round& r : all) {
      if (r.one_state()) continue;
      std::printf("left out: %s (flag round %.3f us at calibration start, %.3f at its end, %.3f at the benchmark's "
                  "start, %.3f at its end: the machine changed state)\n",
                  r.path.c_str(), r.flag_start_us, r.flag_end_us, r.flag_bench_us, r.flag_bench_end_us);
    }
    if (rounds.empty()) {
      std::printf("no round measured one state of the machine throughout: nothing judged\n");
      return max_median >= 0 && max_max >= 0 ? 1 : 0;
    }
    std::printf("%12s %12s %12s %9s   %s\n", "size (B)", "measured us", "predicted us", "error %",
                "per-round errors % (each round's own profile and benchmark)");
    std::vector<double> errs;
    for (const auto& [size, _] : rounds.front().rows) {
      std::vector<double> meas, pred, each;
      for (const Round& r : rounds) {
        const auto it = r.rows.find(size);
        if (it == r.rows.end()) throw_input("validation_summary: size " + std::to_string(size) + " is missing from a round");
        meas.push_back(it->second.first);
        pred.push_back(it->second.second);
        each.push_back(pct(it->second.second, it->second.first));
      }
      const double m = median(meas), p = median(pred), e = pct(p, m);
      errs.push_back(std::abs(e));
      std::string list;
      for (double x : each) {
        if (!list.empty()) list += ' ';
        list += std::to_string(std::lround(x));
      }
      std::printf("%12lld %12.1f %12.1f %+9.1f   %s\n", size, m, p, e, list.c_str());
    }
    const double med = median(errs), mx = *std::max_element(errs.begin(), errs.end());
    std::printf("rounds: %zu of %zu; median over rounds: median |error| %.1f%%, max %.1f%% over %zu sizes\n",
                rounds.size(), all.size(), med, mx, errs.size());
    for (std::size_t k = 0; k < all.size(); ++k) {
      std::vector<double> e;
      for (const auto& [size, mp] : all[k].rows) e.push_back(std::abs(pct(mp.second, mp.first)));
      std::printf("  round %zu alone: median |error| %.1f%%, max %.1f%%%s\n", k + 1, median(e),
                  *std::max_element(e.begin(), e.end()), all[k].one_state() ? "" : " (left out)");
    }
    if (max_median >= 0 && max_max >= 0) {
      const bool ok = med <= max_median && mx <= max_max;
      std::printf("bar (median <= %.0f%%, max <= %.0f%%): %s\n", max_median, max_max, ok ? "met" : "NOT met");
      return ok ? 0 : 1;
    }
    return 0;
  } catch (const Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  }
}
