// A behaviour trace as the grader reads it (the format is docs/api.md's "The behaviour trace"):
// the lines of every rank, split by rank and checked: each line JSON with seq, rank and event;
// each rank's seq counting from 0 without a gap (a line inserted or lost shows); one "start" per
// rank, first, naming the run's size; ranks inside [0, size). What is wrong goes to `problems`,
// and the lines that make sense are kept, so that a partial trace (a crash, a kill) still grades.
//
//   grade::TraceLog t = grade::read_trace(text, 2);
//   for (const auto& e : t.ranks[1]) if (e["event"] == "step") ...
//   t.ended(1)   // rank 1 wrote its "end": its Runtime finished
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace scalelab::grade {

struct TraceLog {
  int size = 0;                                    // the run's rank count
  std::vector<std::vector<nlohmann::json>> ranks;  // each rank's lines, in order
  std::vector<std::string> problems;               // one sentence each: malformed lines, gaps, strangers
  [[nodiscard]] bool started(int rank) const;
  [[nodiscard]] bool ended(int rank) const;
  // The events named `event` of `rank`, in order.
  [[nodiscard]] std::vector<const nlohmann::json*> events(int rank, const std::string& event) const;
};

// Splits and checks the text of a trace written by a run of `size` ranks.
[[nodiscard]] TraceLog read_trace(const std::string& text, int size);

}  // namespace scalelab::grade
