// The grader's tests (grade/checks.h).
#include "grade/checks.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <sstream>

namespace scalelab::grade {
namespace {

// The tests: weight (of 100 with the accuracy's 30 shared among the graded rank counts) and
// visibility. docs/grading.md lists this table: keep both alike.
constexpr double kBuilds = 5, kRunsAt1 = 10, kAccuracy = 30, kParameters = 10, kShards = 10, kLrScaled = 5,
                 kWarmup = 5, kOneWriter = 10, kMetrics = 10, kNoDeadlock = 5;
constexpr const char* kAfterDue = "after_due_date";

std::string fmt(const char* f, double x) {
  char b[64];
  std::snprintf(b, sizeof b, f, x);
  return b;
}

// The lines of a run's output that say why it failed: the program's "error:" lines and mpirun's
// "process rank R ... exited on signal" line when there are any, else its last `n` lines outside
// mpirun's banners (the blocks between lines of dashes).
std::string last_lines(const std::string& text, int n) {
  std::vector<std::string> lines, telling;
  std::istringstream in(text);
  bool banner = false;
  for (std::string l; std::getline(in, l);) {
    const std::size_t b = l.find_first_not_of(' ');
    if (b == std::string::npos) continue;
    if (l.compare(b, 3, "---") == 0) {
      banner = !banner;
      continue;
    }
    l = l.substr(b);
    if (l.rfind("error:", 0) == 0 || l.find("exited on signal") != std::string::npos) telling.push_back(l);
    if (!banner) lines.push_back(l);
  }
  if (!telling.empty()) lines = telling;
  std::string out;
  for (std::size_t i = lines.size() > static_cast<std::size_t>(n) ? lines.size() - static_cast<std::size_t>(n) : 0; i < lines.size(); ++i) {
    out += (out.empty() ? "" : " | ") + lines[i];
  }
  return out.empty() ? "(no output)" : out;
}

const RankRun* find_run(const std::vector<RankRun>& runs, int n) {
  for (const auto& r : runs) {
    if (r.ranks == n) return &r;
  }
  return nullptr;
}

std::vector<double> lrs(const TraceLog& t, int rank) {
  std::vector<double> out;
  for (const auto* e : t.events(rank, "step")) out.push_back(e->value("lr", 0.0));
  return out;
}

// A parameter fingerprint of `rank`: the first "parameters" line with `when`, or the last with it.
std::string fingerprint(const TraceLog& t, int rank, const std::string& when, bool last) {
  std::string out;
  for (const auto* e : t.events(rank, "parameters")) {
    if (e->value("when", "") != when) continue;
    out = e->value("fingerprint", "");
    if (!last) break;
  }
  return out;
}

// The indices of `split` ("train", "test") that `rank` read, per epoch (split at "epoch" lines).
std::vector<std::vector<std::size_t>> indices_by_epoch(const TraceLog& t, int rank, const std::string& split,
                                                       std::vector<long>* steps = nullptr) {
  std::vector<std::vector<std::size_t>> out(1);
  if (steps) steps->assign(1, 0);
  bool seen_epoch = false;
  for (const auto& e : t.ranks[static_cast<std::size_t>(rank)]) {
    const std::string ev = e.value("event", "");
    if (ev == "epoch") {
      if (seen_epoch) {
        out.emplace_back();
        if (steps) steps->push_back(0);
      }
      seen_epoch = true;
    } else if (ev == "step" && steps) {
      ++steps->back();
    } else if (ev == "samples") {
      const std::string ds = e.value("dataset", "");
      if (ds.size() < split.size() + 1 || ds.compare(ds.size() - split.size() - 1, std::string::npos, " " + split) != 0) continue;
      if (!e.contains("indices") || !e["indices"].is_array()) continue;
      for (const auto& i : e["indices"]) {
        if (i.is_number_unsigned()) out.back().push_back(i.get<std::size_t>());
      }
    }
  }
  return out;
}

std::vector<std::string> collective_calls(const TraceLog& t, int rank) {
  std::vector<std::string> out;
  for (const auto* e : t.events(rank, "collective")) out.push_back(e->value("call", "?") + " (" + e->value("op", "?") + ")");
  return out;
}

TestResult make_test(std::string name, double max, std::string expected, std::string hint) {
  TestResult t;
  t.name = std::move(name);
  t.max_score = max;
  t.expected = std::move(expected);
  t.hint = std::move(hint);
  return t;
}

// One finding at one rank count: empty `fault` when it passed.
struct Finding {
  std::string seen;
  std::string fault;
};

// A test checked at every graded rank count above 1; scores the share of counts that pass.
TestResult over_ranks(const std::string& name, double max, const std::vector<RankRun>& runs, const CheckSpec& spec,
                      const std::string& expected, const std::string& hint,
                      const std::function<Finding(const RankRun&)>& check) {
  TestResult t = make_test(name, max, expected, hint);
  int counted = 0, passed = 0;
  for (int n : spec.ranks) {
    if (n < 2) continue;
    ++counted;
    const RankRun* run = find_run(runs, n);
    const Finding f = run ? check(*run) : Finding{"", "not run"};
    if (f.fault.empty()) ++passed;
    t.seen += (t.seen.empty() ? "" : "; ") + std::string("at ") + std::to_string(n) + " ranks: " +
              (f.fault.empty() ? f.seen : "FAULT: " + f.fault + (f.seen.empty() ? "" : " (" + f.seen + ")"));
  }
  t.passed = counted > 0 && passed == counted;
  t.score = counted > 0 ? max * passed / counted : 0;
  return t;
}

// The peak learning rate of rank 0 at one rank: the reference the scaled ones are compared with.
std::optional<double> reference_lr(const std::vector<RankRun>& runs) {
  const RankRun* one = find_run(runs, 1);
  if (!one || one->trace.size < 1) return std::nullopt;
  const auto l = lrs(one->trace, 0);
  if (l.empty()) return std::nullopt;
  return *std::max_element(l.begin(), l.end());
}

}  // namespace

double traced_accuracy(const TraceLog& trace, double* samples) {
  double acc = -1;
  if (trace.size < 1) return acc;
  for (const auto* e : trace.events(0, "collective")) {
    if (e->value("call", "") != "scalelab::sum_over_ranks" || !e->contains("results")) continue;
    const auto& r = (*e)["results"];
    if (!r.is_array() || r.size() != 2 || !r[0].is_number() || !r[1].is_number()) continue;
    const double c = r[0].get<double>(), n = r[1].get<double>();
    if (n <= 0 || c < 0 || c > n) continue;
    acc = c / n;
    if (samples) *samples = n;
  }
  return acc;
}

std::string where_ranks_were(const TraceLog& trace) {
  std::string out;
  for (int r = 0; r < trace.size; ++r) {
    const auto& lines = trace.ranks[static_cast<std::size_t>(r)];
    std::string what;
    if (lines.empty()) {
      what = "wrote no trace (it never created its scalelab::Runtime)";
    } else {
      const auto& last = lines.back();
      const std::string ev = last.value("event", "");
      const std::size_t done = trace.events(r, "collective").size();
      if (ev == "enter") {
        what = "waiting in " + last.value("call", "?") + " (" + last.value("op", "?") + ", its collective #" + std::to_string(done + 1) + ")";
      } else if (ev == "end") {
        what = "finished";
      } else {
        what = "not in a collective (its last line: \"" + ev + "\" after " + std::to_string(done) + " collectives)";
      }
    }
    out += (out.empty() ? "" : "; ") + std::string("rank ") + std::to_string(r) + " " + what;
  }
  return out;
}

std::vector<TestResult> score_runs(const BuildResult& build, const std::vector<RankRun>& runs, const CheckSpec& spec,
                                   const Integrity& integrity) {
  std::vector<TestResult> tests;
  const std::string target = fmt("%.2f", spec.target);

  // Builds.
  tests.push_back(make_test("Builds against the installed scalelab", kBuilds, "cmake and the build succeed with the grader's fixed flags", "build it yourself with the README's cmake commands and fix the first error"));
  tests.back().passed = build.ok;
  tests.back().score = build.ok ? kBuilds : 0;
  tests.back().seen = build.ok ? "built in " + fmt("%.0f", build.seconds) + " s" : "FAULT: the build failed: " + build.seen;

  // Runs at 1 rank.
  {
    TestResult t = make_test("Runs at 1 rank", kRunsAt1, "exit status 0 at 1 rank, with the scalelab::Runtime started and ended", "run ./build/train OUT_DIR yourself and fix what it prints");
    const RankRun* one = find_run(runs, 1);
    if (!build.ok || !one) {
      t.seen = "FAULT: not run: the build failed";
    } else if (!one->outcome.ok()) {
      t.seen = "FAULT: " + one->outcome.ending() + " in " + fmt("%.1f", one->outcome.seconds) + " s: " + last_lines(one->outcome.output, 3);
      if (one->outcome.timed_out) t.seen += "; " + where_ranks_were(one->trace);
    } else if (!one->trace.started(0) || !one->trace.ended(0)) {
      t.seen = "FAULT: exit status 0, but the trace shows no Runtime started and ended";
      t.hint = "keep scalelab::Runtime runtime; at the top of main (step 1)";
    } else {
      t.passed = true;
      t.seen = "exit status 0 in " + fmt("%.1f", one->outcome.seconds) + " s";
    }
    t.score = t.passed ? t.max_score : 0;
    tests.push_back(t);
  }

  // Accuracy at each graded rank count.
  const double share = spec.ranks.empty() ? 0 : kAccuracy / static_cast<double>(spec.ranks.size());
  for (int n : spec.ranks) {
    TestResult t = make_test("Reaches test accuracy " + target + " at " + std::to_string(n) + (n == 1 ? " rank" : " ranks"), share,
                             "exit status 0 within the time limit, and the test accuracy reduced over the ranks "
                             "(scalelab::sum_over_ranks({correct, samples})) at least " + target,
                             "reduce the test counts with scalelab::sum_over_ranks({correct, samples}); if the accuracy is low, "
                             "check the learning-rate scaling and the gradient averaging");
    const RankRun* run = find_run(runs, n);
    double samples = 0;
    const double acc = run ? traced_accuracy(run->trace, &samples) : -1;
    if (!build.ok || !run) {
      t.seen = "FAULT: not run: the build failed";
    } else if (!run->outcome.ok()) {
      t.seen = "FAULT: " + run->outcome.ending() + (run->outcome.timed_out ? "" : ": " + last_lines(run->outcome.output, 2));
      if (acc >= 0) t.seen += " (accuracy " + fmt("%.4f", acc) + " before that)";
    } else if (acc < 0) {
      t.seen = "FAULT: no reduced test accuracy in the trace (no scalelab::sum_over_ranks({correct, samples}))";
    } else if (acc < spec.target) {
      t.seen = "FAULT: accuracy " + fmt("%.4f", acc) + " below " + target;
    } else {
      t.passed = true;
    }
    if (acc >= 0 && run && run->outcome.ok()) {
      t.seen += std::string(t.passed ? "" : "; ") + "accuracy " + fmt("%.4f", acc) + " over " + fmt("%.0f", samples) +
                " test samples in " + fmt("%.1f", run->outcome.seconds) + " s";
    }
    t.score = t.passed ? share : 0;
    tests.push_back(t);
  }

  const bool any_multi = std::any_of(spec.ranks.begin(), spec.ranks.end(), [](int n) { return n > 1; });
  if (any_multi && build.ok) {
    // Identical parameters at the first and the last step.
    tests.push_back(over_ranks(
        "Parameters identical across ranks at the first and last step", kParameters, runs, spec,
        "every rank's parameter fingerprint equal to rank 0's after the first optimizer step and at the end",
        "call scalelab::broadcast_from_rank0(model, optimizer) before the first step (step 6), and step through a "
        "scalelab::DistributedOptimizer (step 5)",
        [](const RankRun& run) -> Finding {
          const TraceLog& tr = run.trace;
          for (const char* when : {"first_step", "final"}) {
            const std::string zero = fingerprint(tr, 0, when, true);
            for (int r = 0; r < tr.size; ++r) {
              const std::string f = fingerprint(tr, r, when, std::string(when) == "final");
              const std::string label = std::string(when) == "final" ? "at the end" : "after the first step";
              if (f.empty()) {
                return {"", "rank " + std::to_string(r) + " recorded no parameters " + label +
                                (tr.ended(r) ? "" : " (it did not finish: " + run.outcome.ending() + ")")};
              }
              if (f != zero) {
                // Equal after a broadcast but apart after the first step: the gradients were not averaged.
                const bool broadcast = !fingerprint(tr, 0, "broadcast", true).empty() &&
                                       fingerprint(tr, r, "broadcast", true) == fingerprint(tr, 0, "broadcast", true);
                const std::string why = std::string(when) != "first_step" ? ""
                                        : broadcast ? " (equal after the broadcast: gradients not averaged, no DistributedOptimizer?)"
                                                    : " (no broadcast from rank 0)";
                return {"rank 0 " + zero + ", rank " + std::to_string(r) + " " + f, "parameters differ across ranks " + label + why};
              }
            }
          }
          return {"identical after the first step and at the end", ""};
        }));

    // Shards.
    tests.push_back(over_ranks(
        "Training shards disjoint and covering the epoch", kShards, runs, spec,
        "in each epoch no training sample read by two ranks, and together the ranks read the epoch "
        "(all but the last partial global batch)",
        "build the scalelab::ShardedSampler with scalelab::size() and scalelab::rank() and call set_epoch each epoch (step 3)",
        [](const RankRun& run) -> Finding {
          const TraceLog& tr = run.trace;
          std::vector<std::vector<std::vector<std::size_t>>> by_rank;
          std::vector<long> steps0;
          for (int r = 0; r < tr.size; ++r) by_rank.push_back(indices_by_epoch(tr, r, "train", r == 0 ? &steps0 : nullptr));
          std::size_t dataset = 0;
          for (const auto* e : tr.events(0, "sampler")) dataset = std::max<std::size_t>(dataset, e->value("dataset_size", std::size_t{0}));
          std::string seen;
          for (std::size_t ep = 0; ep < by_rank[0].size(); ++ep) {
            std::map<std::size_t, int> count;
            std::size_t total = 0;
            for (const auto& rank : by_rank) {
              if (ep >= rank.size()) continue;
              std::set<std::size_t> mine(rank[ep].begin(), rank[ep].end());
              for (std::size_t i : mine) ++count[i];
              total += rank[ep].size();
            }
            if (total == 0) return {"", "no training samples read in epoch " + std::to_string(ep) + " (read them through Dataset::fill)"};
            std::size_t shared = 0, largest = 0;
            for (const auto& [i, c] : count) {
              if (c > 1) ++shared;
              largest = std::max(largest, i + 1);
            }
            const std::size_t n = dataset > 0 ? dataset : largest;
            const long steps = ep < steps0.size() ? steps0[ep] : 0;
            const std::size_t per_step = steps > 0 ? by_rank[0][ep].size() / static_cast<std::size_t>(steps) : 0;
            const std::size_t need = n > per_step * by_rank.size() ? n - per_step * by_rank.size() : 0;
            seen = std::to_string(count.size()) + " distinct of " + std::to_string(n) + " samples in epoch " + std::to_string(ep) +
                   ", " + std::to_string(shared) + " read by more than one rank";
            // Padding to a multiple of the rank count repeats at most size-1 samples.
            if (shared >= static_cast<std::size_t>(tr.size)) return {seen, "the ranks read the same samples (no sharding)"};
            if (count.size() < need) return {seen, "the ranks together read only " + std::to_string(count.size()) + " of " + std::to_string(n) + " samples"};
          }
          return {seen, ""};
        }));

    // The learning rate: scaled, and warmed up.
    const std::optional<double> ref = reference_lr(runs);
    tests.push_back(over_ranks(
        "Learning rate scaled with the number of ranks", kLrScaled, runs, spec,
        "the peak learning rate at N ranks N times the one at 1 rank (linear scaling)",
        "scalelab::LrSchedule with .scaling = \"linear\" and .global_batch = batch * scalelab::size() (step 4)",
        [&ref](const RankRun& run) -> Finding {
          const auto l = lrs(run.trace, 0);
          if (l.empty()) return {"", "no optimizer steps in the trace"};
          if (!ref) return {"", "no learning rate at 1 rank to compare with"};
          const double peak = *std::max_element(l.begin(), l.end());
          const double ratio = peak / *ref;
          const std::string seen = "peak " + fmt("%.4g", peak) + " against " + fmt("%.4g", *ref) + " at 1 rank: x" + fmt("%.2f", ratio);
          if (std::fabs(ratio - run.ranks) > 0.01 * run.ranks) return {seen, "the learning rate is not scaled by " + std::to_string(run.ranks)};
          return {seen, ""};
        }));
    tests.push_back(over_ranks(
        "Learning rate warmed up", kWarmup, runs, spec,
        "the learning rate rising over the first steps to its peak (Horovod's warm-up from the 1-rank rate)",
        "scalelab::LrSchedule with .warmup = \"horovod\" and .warmup_epochs, and pass schedule.lr(step) to every step (step 4)",
        [](const RankRun& run) -> Finding {
          const auto l = lrs(run.trace, 0);
          if (l.empty()) return {"", "no optimizer steps in the trace"};
          const auto peak_at = std::max_element(l.begin(), l.end());
          const std::string seen = "first " + fmt("%.4g", l.front()) + ", peak " + fmt("%.4g", *peak_at) + " at step " +
                                   std::to_string(peak_at - l.begin() + 1);
          if (!(l.front() < 0.9 * *peak_at)) return {seen, "no warm-up: the first step already uses the peak learning rate"};
          if (!std::is_sorted(l.begin(), peak_at + 1)) return {seen, "the learning rate does not rise steadily to its peak"};
          return {seen, ""};
        }));

    // One writer: checkpoints through the trace, and any file (a log written with std::ofstream
    // too) through the rank's own folder.
    tests.push_back(over_ranks(
        "Only rank 0 writes checkpoints and logs", kOneWriter, runs, spec,
        "scalelab::save_checkpoint called on rank 0 only, at least once, and no file written by any other rank",
        "wrap the log and save_checkpoint in scalelab::on_rank0 (step 7)",
        [](const RankRun& run) -> Finding {
          std::vector<int> writers;
          std::size_t zero = 0;
          for (int r = 0; r < run.trace.size; ++r) {
            const std::size_t n = run.trace.events(r, "file").size();
            if (r == 0) zero = n;
            if (r > 0 && n > 0) writers.push_back(r);
          }
          std::string seen = "rank 0 wrote " + std::to_string(zero) + " checkpoint(s)";
          auto list = [](const std::vector<std::string>& files) {
            std::string out;
            for (std::size_t i = 0; i < files.size() && i < 4; ++i) out += (i ? ", " : "") + files[i];
            if (files.size() > 4) out += " and " + std::to_string(files.size() - 4) + " more";
            return out;
          };
          if (!run.files.empty() && !run.files[0].empty()) seen += "; files of rank 0: " + list(run.files[0]);
          if (!writers.empty()) {
            std::string who;
            for (int r : writers) who += (who.empty() ? "" : ", ") + std::to_string(r);
            return {seen + ", ranks " + who + " too", "every rank writes the checkpoint (ranks " + who + " besides 0)"};
          }
          for (std::size_t r = 1; r < run.files.size(); ++r) {
            if (!run.files[r].empty()) {
              return {seen, "rank " + std::to_string(r) + " wrote " + list(run.files[r]) + ": only rank 0 writes the log and the checkpoints"};
            }
          }
          if (zero == 0) return {seen, "no checkpoint written"};
          return {seen, ""};
        }));

    // Metrics averaged.
    TestResult metrics = over_ranks(
        "Metrics averaged over the ranks", kMetrics, runs, spec,
        "the test accuracy reduced over all ranks (sum_over_ranks of correct and samples), each test sample evaluated once",
        "evaluate ShardedSampler::exact_shard(test size, size(), rank()) and reduce with scalelab::sum_over_ranks (step 8)",
        [](const RankRun& run) -> Finding {
          double samples = 0;
          const double acc = traced_accuracy(run.trace, &samples);
          std::set<std::size_t> all;
          std::size_t read = 0;
          for (int r = 0; r < run.trace.size; ++r) {
            const auto last = indices_by_epoch(run.trace, r, "test").back();
            read += last.size();
            all.insert(last.begin(), last.end());
          }
          const std::string seen = std::to_string(read) + " test samples read by the ranks, " + std::to_string(all.size()) + " distinct";
          if (acc < 0) return {seen, "the metrics are not averaged: no reduction of the test accuracy over the ranks"};
          if (read != all.size()) return {seen + ", " + fmt("%.0f", samples) + " counted", "test samples evaluated on more than one rank"};
          if (static_cast<std::size_t>(samples) != all.size()) {
            return {seen + ", " + fmt("%.0f", samples) + " counted", "the reduced sample count is not the number of test samples the ranks read"};
          }
          return {seen + ", accuracy " + fmt("%.4f", acc) + " over all of them", ""};
        });
    metrics.visibility = kAfterDue;
    tests.push_back(metrics);

    // No deadlock.
    TestResult deadlock = over_ranks(
        "No deadlock: the same collectives in the same order on every rank", kNoDeadlock, runs, spec,
        "the run ends within the time limit, every rank calling the same collectives in the same order",
        "make every collective call (averages, broadcasts, barriers, parameters_agree) on every rank, in the same order; "
        "keep rank-dependent branches free of them",
        [](const RankRun& run) -> Finding {
          if (run.outcome.timed_out) return {where_ranks_were(run.trace), "hung: " + run.outcome.ending()};
          const auto zero = collective_calls(run.trace, 0);
          for (int r = 1; r < run.trace.size; ++r) {
            const auto mine = collective_calls(run.trace, r);
            const std::size_t n = std::min(zero.size(), mine.size());
            for (std::size_t i = 0; i < n; ++i) {
              if (mine[i] != zero[i]) {
                return {"collective #" + std::to_string(i + 1) + ": rank 0 " + zero[i] + ", rank " + std::to_string(r) + " " + mine[i],
                        "rank-dependent collective order"};
              }
            }
          }
          return {std::to_string(zero.size()) + " collectives, alike on every rank", ""};
        });
    deadlock.visibility = kAfterDue;
    tests.push_back(deadlock);
  }

  // Integrity: scored 0, but a failure makes the whole score 0 (GradeReport::integrity_ok).
  {
    TestResult t = make_test("Integrity: the grader's files left alone", 0, "no results.json written by the program, and a well-formed behaviour trace", "do not write results.json or the trace yourself: the grader writes them");
    std::vector<std::string> issues = integrity.violations;
    for (const auto& run : runs) {
      for (const auto& p : run.trace.problems) issues.push_back("at " + std::to_string(run.ranks) + " ranks: " + p);
    }
    t.passed = issues.empty();
    for (const auto& i : issues) t.seen += (t.seen.empty() ? "FAULT: " : "; ") + i;
    if (t.passed) t.seen = "nothing tampered with";
    tests.push_back(t);
  }
  return tests;
}

}  // namespace scalelab::grade
