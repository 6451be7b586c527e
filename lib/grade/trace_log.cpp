// A behaviour trace as the grader reads it (grade/trace_log.h).
#include "grade/trace_log.h"

#include <sstream>

namespace scalelab::grade {

bool TraceLog::started(int rank) const {
  return rank >= 0 && rank < size && !ranks[static_cast<std::size_t>(rank)].empty() &&
         ranks[static_cast<std::size_t>(rank)].front().value("event", "") == "start";
}

bool TraceLog::ended(int rank) const {
  return rank >= 0 && rank < size && !ranks[static_cast<std::size_t>(rank)].empty() &&
         ranks[static_cast<std::size_t>(rank)].back().value("event", "") == "end";
}

std::vector<const nlohmann::json*> TraceLog::events(int rank, const std::string& event) const {
  std::vector<const nlohmann::json*> out;
  if (rank < 0 || rank >= size) return out;
  for (const auto& e : ranks[static_cast<std::size_t>(rank)]) {
    if (e.value("event", "") == event) out.push_back(&e);
  }
  return out;
}

TraceLog read_trace(const std::string& text, int size) {
  TraceLog t;
  t.size = size;
  t.ranks.resize(static_cast<std::size_t>(size));
  std::vector<long long> next_seq(static_cast<std::size_t>(size), 0);
  std::istringstream in(text);
  int number = 0;
  std::string line;
  auto problem = [&](const std::string& what) {
    if (t.problems.size() < 20) t.problems.push_back("trace line " + std::to_string(number) + ": " + what);
  };
  while (std::getline(in, line)) {
    ++number;
    if (line.empty()) continue;
    nlohmann::json e = nlohmann::json::parse(line, nullptr, false);
    if (e.is_discarded() || !e.is_object()) {
      problem("not a JSON object");
      continue;
    }
    if (!e.contains("seq") || !e["seq"].is_number_integer() || !e.contains("rank") || !e["rank"].is_number_integer() ||
        !e.contains("event") || !e["event"].is_string()) {
      problem("lacks seq, rank or event");
      continue;
    }
    const int rank = e["rank"].get<int>();
    if (rank < 0 || rank >= size) {
      problem("rank " + std::to_string(rank) + " in a run of " + std::to_string(size));
      continue;
    }
    const auto r = static_cast<std::size_t>(rank);
    const long long seq = e["seq"].get<long long>();
    if (seq != next_seq[r]) {
      problem("rank " + std::to_string(rank) + "'s seq " + std::to_string(seq) + " where " + std::to_string(next_seq[r]) +
              " was due (a line inserted, lost or written twice)");
    }
    next_seq[r] = seq + 1;
    const std::string event = e["event"];
    if (event == "start") {
      if (!t.ranks[r].empty()) problem("a second start for rank " + std::to_string(rank));
      if (e.value("size", -1) != size) problem("rank " + std::to_string(rank) + " started in a job of " + std::to_string(e.value("size", -1)) + " ranks");
    } else if (t.ranks[r].empty()) {
      problem("rank " + std::to_string(rank) + " wrote \"" + event + "\" before its start");
    }
    t.ranks[r].push_back(std::move(e));
  }
  return t;
}

}  // namespace scalelab::grade
