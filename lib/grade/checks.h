// The grader's tests: what a data-parallel program following Horovod's steps must have done,
// read from the behaviour traces of its runs (never from what it printed), each scored. The table
// of tests, their weights and visibility is at the top of checks.cpp; docs/grading.md lists it.
//
//   std::vector<grade::TestResult> tests = grade::score_runs(build, runs, {.target = 0.8, .ranks = {1, 2, 3}}, integrity);
//
// Tests over several rank counts (identical parameters, shards, ...) are checked at each count
// above 1 and score the share of counts that pass; their output names each count's finding.
#pragma once
#include <string>
#include <vector>

#include "grade/results.h"
#include "grade/sandbox.h"
#include "grade/trace_log.h"

namespace scalelab::grade {

struct BuildResult {
  bool ok = false;
  double seconds = 0;
  std::string seen;  // the compiler's first error lines, when it failed
};

// One run of the program at `ranks` ranks. Each rank runs in a folder of its own, so that the
// files a rank writes (its log, its checkpoints) can be told from another's.
struct RankRun {
  int ranks = 1;
  RunOutcome outcome;
  TraceLog trace;
  std::vector<std::vector<std::string>> files;  // per rank: the files it left in its folder ("out/train.log")
};

struct CheckSpec {
  double target = 0.80;         // the test accuracy to reach
  std::vector<int> ranks;       // the rank counts graded for accuracy (the runs hold these and 1)
};

// What the grader found the submission doing to its files (results.json, the trace).
struct Integrity {
  std::vector<std::string> violations;
};

[[nodiscard]] std::vector<TestResult> score_runs(const BuildResult& build, const std::vector<RankRun>& runs,
                                                 const CheckSpec& spec, const Integrity& integrity);

// The trace's accuracy: the last scalelab::sum_over_ranks({correct, samples}) of rank 0, as
// correct / samples; negative when there is none.
[[nodiscard]] double traced_accuracy(const TraceLog& trace, double* samples = nullptr);

// What each rank was doing when a run stopped, from its last trace line: "rank 0 waiting in
// scalelab::parameters_agree (allgather, its collective #12); rank 1 ...".
[[nodiscard]] std::string where_ranks_were(const TraceLog& trace);

}  // namespace scalelab::grade
