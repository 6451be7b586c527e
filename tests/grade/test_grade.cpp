// Unit tests of the autograder's parts (lib/grade): the trace reader's checks, each scored test
// against synthetic traces of a correct program and of one fault at a time, Gradescope's JSON,
// and the sandbox (exit status, signals, the wall-time kill of a whole process tree, memory and
// network limits). The end-to-end tests (grade_check.sh) grade real programs.
#include <signal.h>
#include <sys/types.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <set>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "grade/checks.h"
#include "grade/results.h"
#include "grade/sandbox.h"
#include "grade/trace_log.h"

namespace {

using namespace scalelab::grade;
using nlohmann::json;

struct Faults {
  bool no_shard = false, no_broadcast = false, no_scale = false, no_warmup = false, all_write = false, no_metrics = false,
       swapped_order = false, hang = false, no_averaging = false;
};

// The trace of a tiny program at n ranks: 12 training samples, 2 per rank and step, 4 test samples.
std::string fake_trace(int n, const Faults& f) {
  std::string text;
  const int steps = 12 / (2 * n);
  const double peak = 0.1 * (f.no_scale ? 1 : n);
  for (int r = 0; r < n; ++r) {
    long seq = 0;
    auto line = [&](json e) {
      json out = {{"seq", seq++}, {"rank", r}};
      out.update(e);
      text += out.dump() + "\n";
    };
    auto collective = [&](const std::string& op, const std::string& call, json extra = json::object()) {
      line({{"event", "enter"}, {"op", op}, {"call", call}});
      json e = {{"event", "collective"}, {"op", op}, {"call", call}};
      e.update(extra);
      line(e);
    };
    const std::string fp = f.no_broadcast ? "000000000000000" + std::to_string(r) : "00000000000000aa";
    line({{"event", "start"}, {"size", n}});
    line({{"event", "sampler"}, {"dataset_size", 12}});
    line({{"event", "epoch"}, {"epoch", 0}});
    if (!f.no_broadcast) collective("broadcast", "scalelab::broadcast_from_rank0");
    line({{"event", "parameters"}, {"when", "broadcast"}, {"fingerprint", fp}});
    for (int s = 0; s < steps; ++s) {
      json idx = json::array();
      for (int k = 0; k < 2; ++k) idx.push_back(f.no_shard ? 2 * s + k : (2 * s + k) * n + r);
      line({{"event", "samples"}, {"dataset", "fake train"}, {"indices", idx}});
      collective("allreduce", "scalelab::DistributedOptimizer::step");
      const double lr = f.no_warmup || steps == 1 ? peak : peak / n * (1 + (n - 1) * double(s) / (steps - 1));
      line({{"event", "step"}, {"step", s + 1}, {"lr", lr}});
      const std::string stepped = f.no_averaging ? "00000000000000b" + std::to_string(r) : fp;
      if (s == 0) line({{"event", "parameters"}, {"when", "first_step"}, {"fingerprint", stepped}});
    }
    json test = json::array();
    for (int i = r; i < 4; i += n) test.push_back(i);
    line({{"event", "samples"}, {"dataset", "fake test"}, {"indices", test}});
    const bool swap = f.swapped_order && r == 1;
    if (!f.no_metrics && !swap) collective("allreduce", "scalelab::average_over_ranks", {{"values", {0.5}}, {"results", {0.5}}});
    if (!f.no_metrics) collective("allreduce", "scalelab::sum_over_ranks", {{"values", {1, int(test.size())}}, {"results", {3.4, 4}}});
    if (!f.no_metrics && swap) collective("allreduce", "scalelab::average_over_ranks", {{"values", {0.5}}, {"results", {0.5}}});
    if (r == 0 || f.all_write) line({{"event", "file"}, {"kind", "checkpoint"}, {"path", "/x/model.ckpt"}});
    if (f.hang) {  // rank 1 calls a barrier that rank 0 does not: both wait until the kill
      line(r == 1 ? json{{"event", "enter"}, {"op", "barrier"}, {"call", "scalelab::barrier"}}
                  : json{{"event", "enter"}, {"op", "allgather"}, {"call", "scalelab::parameters_agree"}});
      continue;
    }
    line({{"event", "parameters"}, {"when", "final"}, {"fingerprint", f.no_averaging ? "00000000000000c" + std::to_string(r) : fp}});
    line({{"event", "end"}});
  }
  return text;
}

RankRun fake_run(int n, const Faults& f) {
  RankRun run;
  run.ranks = n;
  run.outcome.exit_code = f.hang ? -1 : 0;
  run.outcome.timed_out = f.hang;
  run.outcome.seconds = 1;
  run.trace = read_trace(fake_trace(n, f), n);
  return run;
}

// The names of the tests that fail when the program at 2 ranks has `f` (1 rank correct).
std::set<std::string> failing(const Faults& f, const Integrity& integrity = {}) {
  BuildResult build{.ok = true, .seconds = 1, .seen = ""};
  const auto tests = score_runs(build, {fake_run(1, {}), fake_run(2, f)}, {.target = 0.8, .ranks = {1, 2}}, integrity);
  std::set<std::string> out;
  for (const auto& t : tests) {
    if (t.max_score > 0) {
      EXPECT_EQ(t.passed, t.score == t.max_score) << t.name;
    }
    if (!t.passed) out.insert(t.name.substr(0, t.name.find(' ', t.name.find(' ') + 1)));
  }
  return out;
}

TEST(GradeTrace, SplitsByRankAndFlagsGapsStrangersAndMalformedLines) {
  const std::string text = R"({"seq":0,"rank":0,"event":"start","size":2}
{"seq":0,"rank":1,"event":"start","size":2}
{"seq":1,"rank":0,"event":"end"}
{"seq":3,"rank":1,"event":"end"}
{"seq":0,"rank":5,"event":"start","size":2}
not json
)";
  const TraceLog t = read_trace(text, 2);
  ASSERT_EQ(t.ranks.size(), 2u);
  EXPECT_TRUE(t.started(0) && t.ended(0) && t.started(1) && t.ended(1));
  ASSERT_EQ(t.problems.size(), 3u);
  EXPECT_NE(t.problems[0].find("rank 1's seq 3 where 1 was due"), std::string::npos) << t.problems[0];
  EXPECT_NE(t.problems[1].find("rank 5 in a run of 2"), std::string::npos) << t.problems[1];
  EXPECT_NE(t.problems[2].find("not a JSON object"), std::string::npos) << t.problems[2];
  EXPECT_TRUE(read_trace(fake_trace(3, {}), 3).problems.empty());
}

TEST(GradeTrace, AccuracyIsTheLastReducedCountAndHungRanksNameTheirCall) {
  const TraceLog ok = read_trace(fake_trace(2, {}), 2);
  double samples = 0;
  EXPECT_DOUBLE_EQ(traced_accuracy(ok, &samples), 3.4 / 4);
  EXPECT_EQ(samples, 4);
  EXPECT_LT(traced_accuracy(read_trace(fake_trace(2, {.no_metrics = true}), 2)), 0);
  const std::string where = where_ranks_were(read_trace(fake_trace(2, {.hang = true}), 2));
  EXPECT_NE(where.find("rank 0 waiting in scalelab::parameters_agree (allgather"), std::string::npos) << where;
  EXPECT_NE(where.find("rank 1 waiting in scalelab::barrier (barrier"), std::string::npos) << where;
}

TEST(GradeChecks, ACorrectProgramPassesEveryTest) {
  EXPECT_EQ(failing({}), std::set<std::string>{});
}

TEST(GradeChecks, EachFaultLosesItsOwnTest) {
  using S = std::set<std::string>;
  EXPECT_EQ(failing({.no_shard = true}), S{"Training shards"});
  EXPECT_EQ(failing({.no_broadcast = true}), S{"Parameters identical"});
  EXPECT_EQ(failing({.no_scale = true}), S{"Learning rate"});  // "scaled" only: warm-up still rises
  EXPECT_EQ(failing({.no_warmup = true}), S{"Learning rate"});
  EXPECT_EQ(failing({.all_write = true}), S{"Only rank"});
  EXPECT_EQ(failing({.no_metrics = true}), (S{"Metrics averaged", "Reaches test"}));
  EXPECT_EQ(failing({.swapped_order = true}), S{"No deadlock:"});
  EXPECT_EQ(failing({.no_averaging = true}), S{"Parameters identical"});
  EXPECT_EQ(failing({.hang = true}), (S{"No deadlock:", "Reaches test", "Parameters identical"}));
  EXPECT_EQ(failing({}, {.violations = {"the program wrote results.json"}}), S{"Integrity: the"});
}

TEST(GradeChecks, ParametersApartTellAMissingBroadcastFromMissingAveraging) {
  BuildResult build{.ok = true, .seconds = 1, .seen = ""};
  auto seen = [&](const Faults& f) {
    for (const auto& t : score_runs(build, {fake_run(1, {}), fake_run(2, f)}, {.target = 0.8, .ranks = {1, 2}}, {})) {
      if (t.name.rfind("Parameters", 0) == 0) return t.seen;
    }
    return std::string();
  };
  EXPECT_NE(seen({.no_broadcast = true}).find("(no broadcast from rank 0)"), std::string::npos) << seen({.no_broadcast = true});
  EXPECT_NE(seen({.no_averaging = true}).find("gradients not averaged"), std::string::npos) << seen({.no_averaging = true});
}

TEST(GradeChecks, TheLearningRateTestsTellScalingFromWarmup) {
  BuildResult build{.ok = true, .seconds = 1, .seen = ""};
  auto named = [&](const Faults& f, const std::string& name) {
    for (const auto& t : score_runs(build, {fake_run(1, {}), fake_run(2, f)}, {.target = 0.8, .ranks = {1, 2}}, {})) {
      if (t.name == name) return t;
    }
    return TestResult{};
  };
  EXPECT_FALSE(named({.no_scale = true}, "Learning rate scaled with the number of ranks").passed);
  EXPECT_TRUE(named({.no_scale = true}, "Learning rate warmed up").passed);
  EXPECT_TRUE(named({.no_warmup = true}, "Learning rate scaled with the number of ranks").passed);
  const TestResult w = named({.no_warmup = true}, "Learning rate warmed up");
  EXPECT_FALSE(w.passed);
  EXPECT_NE(w.output().find("no warm-up"), std::string::npos) << w.output();
  EXPECT_NE(w.output().find("hint: "), std::string::npos) << w.output();
}

TEST(GradeChecks, AFailedBuildFailsEveryTestAndTheAccuracyShareFollowsTheRanks) {
  BuildResult build{.ok = false, .seconds = 1, .seen = "train.cpp:3: error: expected ';'"};
  const auto tests = score_runs(build, {}, {.target = 0.8, .ranks = {1, 2, 4}}, {});
  double max = 0;
  for (const auto& t : tests) {
    max += t.max_score;
    if (t.max_score > 0) {
      EXPECT_FALSE(t.passed) << t.name;
    }
    if (t.name.rfind("Reaches", 0) == 0) {
      EXPECT_DOUBLE_EQ(t.max_score, 10);
    }
  }
  EXPECT_DOUBLE_EQ(max, 45);  // build, 1 rank and the accuracy; the rest needs a build
  EXPECT_NE(tests[0].seen.find("expected ';'"), std::string::npos);
}

TEST(GradeResults, GradescopeJsonSumsScoresAndZeroesATamperedSubmission) {
  GradeReport r;
  TestResult a;
  a.name = "A";
  a.max_score = 10;
  a.score = 10;
  a.passed = true;
  TestResult b;
  b.name = "B";
  b.max_score = 5;
  b.visibility = "after_due_date";
  r.tests = {a, b};
  r.execution_s = 12.6;
  r.leaderboard.push_back({.name = "Time to accuracy at 2 ranks (s)", .value = 3.21, .ascending = true});
  json doc = gradescope_results(r);
  EXPECT_EQ(doc["score"], 10);
  EXPECT_EQ(doc["execution_time"], 13);
  EXPECT_EQ(doc["tests"][1]["status"], "failed");
  EXPECT_EQ(doc["tests"][1]["visibility"], "after_due_date");
  EXPECT_EQ(doc["leaderboard"][0]["order"], "asc");
  r.integrity_ok = false;
  EXPECT_EQ(gradescope_results(r)["score"], 0);
  EXPECT_NE(summary_table(r).find("tampered"), std::string::npos);
}

std::string temp_file(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("grade_test_" + std::to_string(::getpid()) + "_" + name)).string();
}

TEST(GradeSandbox, ExitStatusOutputAndSignals) {
  const Limits quick{.wall_s = 30, .memory_mib = 0, .isolate_network = false};
  RunOutcome r = run_limited({"sh", "-c", "echo hello; echo \"$GREETING\" >&2; exit 3"}, "", {{"GREETING", "hi there"}}, quick, temp_file("a"));
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.output, "hello\nhi there\n");
  EXPECT_EQ(r.ending(), "exit status 3");
  r = run_limited({"sh", "-c", "kill -SEGV $$"}, "", {}, quick, temp_file("a"));
  EXPECT_EQ(r.signal, SIGSEGV);
  EXPECT_NE(r.ending().find("signal 11"), std::string::npos);
  r = run_limited({"/no/such/program"}, "", {}, quick, temp_file("a"));
  EXPECT_EQ(r.exit_code, 127);
  EXPECT_NE(r.output.find("cannot start /no/such/program"), std::string::npos);
  std::filesystem::remove(temp_file("a"));
}

TEST(GradeSandbox, TheWallTimeLimitKillsTheWholeTreeEvenWhatLeftTheGroup) {
  // 3 s: time for sh to start its escaping child and say its pid, even on a loaded machine.
  const Limits limits{.wall_s = 3, .memory_mib = 0, .isolate_network = false};
  const RunOutcome r = run_limited({"sh", "-c", "setsid sleep 60 & echo $!; sleep 60"}, "", {}, limits, temp_file("b"));
  EXPECT_TRUE(r.timed_out);
  EXPECT_LT(r.seconds, 20);
  // (sh, sleep; or sleep alone where sh is bash, which execs the last command)
  EXPECT_NE(r.ending().find("killed at the 3 s limit; still running then: "), std::string::npos) << r.ending();
  EXPECT_NE(r.ending().find("sleep"), std::string::npos) << r.ending();
  const pid_t escaped = static_cast<pid_t>(std::stol(r.output));
  EXPECT_EQ(::kill(escaped, 0), -1);  // gone, and reaped
  EXPECT_EQ(errno, ESRCH);
  std::filesystem::remove(temp_file("b"));
}

TEST(GradeSandbox, ARunThatEndsByItselfNamesWhatItLeftRunning) {
  const Limits limits{.wall_s = 30, .memory_mib = 0, .isolate_network = false};
  RunOutcome r = run_limited({"sh", "-c", "sleep 60 > /dev/null 2>&1 & while [ \"$(cat /proc/$!/comm)\" != sleep ]; do :; done; exit 0"}, "", {}, limits, temp_file("e"));
  EXPECT_TRUE(r.ok());
  EXPECT_LT(r.seconds, 20);
  EXPECT_EQ(r.ending(), "exit status 0; it left running, killed then: sleep");
  r = run_limited({"sh", "-c", "exit 0"}, "", {}, limits, temp_file("e"));
  EXPECT_EQ(r.ending(), "exit status 0");
  std::filesystem::remove(temp_file("e"));
}

// A submission may not fill the grading machine's disk: one file past the limit ends with SIGXFSZ,
// and many files each under it are stopped when the run's folder passes it.
TEST(GradeSandbox, TheDiskLimitStopsOneLargeFileAndAFolderOfManySmallOnes) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("grade_disk_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const Limits limits{.wall_s = 60, .memory_mib = 0, .isolate_network = false, .disk_mib = 16};
  RunOutcome r = run_limited({"sh", "-c", "head -c 40000000 /dev/zero > big.bin"}, dir.string(), {}, limits, temp_file("d"));
  EXPECT_FALSE(r.ok());
  EXPECT_LE(fs::file_size(dir / "big.bin"), 16u << 20);
  EXPECT_NE(r.limits.text().find("disk 16 MiB per file and in all"), std::string::npos) << r.limits.text();
  // Files of 8 MiB, one every 0.2 s, until the folder passes 16 MiB (checked once a second).
  r = run_limited({"sh", "-c", "i=0; while [ $i -lt 100 ]; do head -c 8000000 /dev/zero > f$i.bin; i=$((i+1)); sleep 0.2; done"},
                  dir.string(), {}, limits, temp_file("d"));
  EXPECT_TRUE(r.disk_full) << r.ending();
  EXPECT_EQ(r.ending(), "killed when its folder passed the 16 MiB disk limit");
  EXPECT_LT(r.seconds, 20);
  fs::remove_all(dir);
  fs::remove(temp_file("d"));
}

TEST(GradeSandbox, MemoryAndNetworkLimitsAreAppliedAndReported) {
  // 300 MB in a shell variable does not fit in 256 MiB of address space.
  const std::string hog = "x=$(head -c 300000000 /dev/zero | tr '\\0' a); echo ${#x}";
  const RunOutcome r = run_limited({"sh", "-c", hog}, "", {}, {.wall_s = 60, .memory_mib = 256, .isolate_network = true}, temp_file("c"));
  EXPECT_FALSE(r.ok()) << r.output;
  EXPECT_EQ(r.limits.memory_mib, 256);
  EXPECT_NE(r.limits.text().find("memory 256 MiB per process"), std::string::npos);
  const RunOutcome net = run_limited({"cat", "/proc/net/dev"}, "", {}, {.wall_s = 30, .memory_mib = 0, .isolate_network = true}, temp_file("c"));
  if (!net.limits.network_isolated) {
    EXPECT_FALSE(net.limits.network_note.empty());
    GTEST_SKIP() << "no network namespace here: " << net.limits.network_note;
  }
  // In its own namespace the program sees the loopback interface and nothing else.
  int interfaces = 0;
  for (std::size_t at = net.output.find(':'); at != std::string::npos; at = net.output.find(':', at + 1)) ++interfaces;
  EXPECT_EQ(interfaces, 1) << net.output;
  EXPECT_NE(net.output.find("lo:"), std::string::npos) << net.output;
  std::filesystem::remove(temp_file("c"));
}

}  // namespace
