// Gradescope's results.json and the console table (grade/results.h).
#include "grade/results.h"

#include <cmath>
#include <cstdio>

namespace scalelab::grade {
namespace {

double rounded(double x) { return std::round(x * 100) / 100; }

}  // namespace

std::string TestResult::output() const {
  std::string text = "expected: " + expected + "\nseen: " + seen;
  if (!passed && !hint.empty()) text += "\nhint: " + hint;
  return text;
}

double GradeReport::score() const {
  if (!integrity_ok) return 0;
  double s = 0;
  for (const auto& t : tests) s += t.score;
  return rounded(s);
}

double GradeReport::max_score() const {
  double s = 0;
  for (const auto& t : tests) s += t.max_score;
  return rounded(s);
}

nlohmann::ordered_json gradescope_results(const GradeReport& report) {
  nlohmann::ordered_json doc;
  doc["score"] = report.score();
  doc["execution_time"] = static_cast<long>(std::lround(report.execution_s));
  doc["output"] = report.output;
  doc["output_format"] = "text";
  doc["stdout_visibility"] = "hidden";
  doc["tests"] = nlohmann::ordered_json::array();
  for (const auto& t : report.tests) {
    doc["tests"].push_back({{"name", t.name},
                            {"score", rounded(t.score)},
                            {"max_score", rounded(t.max_score)},
                            {"status", t.passed ? "passed" : "failed"},
                            {"output", t.output()},
                            {"output_format", "text"},
                            {"visibility", t.visibility}});
  }
  doc["leaderboard"] = nlohmann::ordered_json::array();
  for (const auto& l : report.leaderboard) {
    nlohmann::ordered_json e = {{"name", l.name}, {"value", std::round(l.value * 1e4) / 1e4}};
    if (l.ascending) e["order"] = "asc";
    doc["leaderboard"].push_back(e);
  }
  return doc;
}

std::string summary_table(const GradeReport& report) {
  std::string text;
  char line[512];
  std::snprintf(line, sizeof line, "%-6s %13s  %s\n", "status", "score", "test");
  text += line;
  for (const auto& t : report.tests) {
    std::snprintf(line, sizeof line, "%-6s %6.2f / %-5.4g  %s\n", t.passed ? "pass" : "FAIL", t.score, t.max_score, t.name.c_str());
    text += line;
    if (!t.passed) text += "       seen: " + t.seen + "\n";
  }
  std::snprintf(line, sizeof line, "%-6s %6.2f / %-5.4g  %s\n", "total", report.score(), report.max_score(),
                report.integrity_ok ? "" : "(0: the submission tampered with the grader's files)");
  text += line;
  return text;
}

}  // namespace scalelab::grade
