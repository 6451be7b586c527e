// A graded submission: its tests (name, score, max_score, status, output, visibility), written as
// Gradescope's autograder results.json (https://gradescope-autograders.readthedocs.io, "Output
// format": score, execution_time, output, output_format, tests, stdout_visibility, leaderboard)
// and as the console's summary table.
//
//   grade::GradeReport report = grade::grade_submission(options);   // grade/grader.h
//   write_json_file("results.json", grade::gradescope_results(report));
//   std::fputs(grade::summary_table(report).c_str(), stdout);
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace scalelab::grade {

struct TestResult {
  std::string name;
  double score = 0;
  double max_score = 0;
  bool passed = false;
  std::string expected;  // what a correct program does
  std::string seen;      // what this one did (the fault, when it failed)
  std::string hint;      // what to change (failed tests only)
  std::string visibility = "visible";  // Gradescope's: visible, hidden, after_due_date, after_published
  // "expected: ...\nseen: ...\nhint: ..." (the hint only when the test failed).
  [[nodiscard]] std::string output() const;
};

struct LeaderboardEntry {
  std::string name;
  double value = 0;
  bool ascending = false;  // smaller is better (a time)
};

struct GradeReport {
  std::vector<TestResult> tests;
  std::vector<LeaderboardEntry> leaderboard;
  std::string output;        // the top-level text: limits in force, runs, integrity
  double execution_s = 0;    // the whole grading's wall time
  bool integrity_ok = true;  // false: the submission tampered with the grader's files; score 0
  [[nodiscard]] double score() const;      // the sum of the tests' scores (0 when integrity failed)
  [[nodiscard]] double max_score() const;  // the sum of their max_scores
};

// Gradescope's results.json.
[[nodiscard]] nlohmann::ordered_json gradescope_results(const GradeReport& report);
// The console summary: one row per test (status, score / max, name) and the total.
[[nodiscard]] std::string summary_table(const GradeReport& report);

}  // namespace scalelab::grade
