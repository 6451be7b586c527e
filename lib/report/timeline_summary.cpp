// Timeline summaries (see timeline_summary.h).
#include "report/timeline_summary.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <unordered_map>

#include "core/error.h"

namespace scalelab::report {

namespace {

// The largest pid (a rank) and time (microseconds) a trace may hold: past them a file is damaged.
constexpr long long kMaxTimelinePid = 1 << 24;
constexpr double kMaxTimelineMicroseconds = 1e15;

// Sorted, merged copy of the intervals.
std::vector<std::pair<double, double>> merged(std::vector<std::pair<double, double>> v) {
  std::sort(v.begin(), v.end());
  std::vector<std::pair<double, double>> out;
  for (const auto& iv : v) {
    if (iv.second <= iv.first) continue;
    if (!out.empty() && iv.first <= out.back().second) out.back().second = std::max(out.back().second, iv.second);
    else out.push_back(iv);
  }
  return out;
}

[[noreturn]] void bad_timeline(const std::string& origin, const std::string& what) {
  throw_input(origin + ": " + what + "; give the Chrome trace that scalelab train or simulate writes as its timeline");
}

}  // namespace

bool is_communication(const std::string& p) { return p == "allreduce" || p == "communication"; }
bool is_compute(const std::string& p) { return p == "forward" || p == "backward" || p == "optimizer" || p == "compute"; }

double union_length(std::vector<std::pair<double, double>> intervals) {
  double total = 0;
  for (const auto& [a, b] : merged(std::move(intervals))) total += b - a;
  return total;
}

double overlap_length(std::vector<std::pair<double, double>> a, std::vector<std::pair<double, double>> b) {
  const auto x = merged(std::move(a)), y = merged(std::move(b));
  double total = 0;
  std::size_t i = 0, j = 0;
  while (i < x.size() && j < y.size()) {
    const double lo = std::max(x[i].first, y[j].first), hi = std::min(x[i].second, y[j].second);
    if (hi > lo) total += hi - lo;
    if (x[i].second < y[j].second) ++i;
    else ++j;
  }
  return total;
}

TimelineSummary summarize_timeline(const nlohmann::json& doc, const std::string& origin) {
  const auto bad = [&origin](const std::string& what) { bad_timeline(origin, what); };
  const nlohmann::json* events = nullptr;
  if (doc.is_array()) events = &doc;
  else if (doc.is_object() && doc.contains("traceEvents") && doc["traceEvents"].is_array()) events = &doc["traceEvents"];
  else bad_timeline(origin, "not a Chrome trace (no \"traceEvents\" array)");

  struct Acc {
    TimelineTrack t;
    double first = INFINITY, last = -INFINITY;
    std::vector<std::pair<double, double>> comm, compute;
    std::map<long long, std::vector<std::pair<double, double>>> by_thread;  // tid -> spans
    std::unordered_map<std::string, std::size_t> phase_at;  // name -> its place in t.phases and t.counts
  };
  std::map<int, Acc> tracks;
  std::map<int, std::string> names;
  TimelineSummary s;
  for (std::size_t i = 0; i < events->size(); ++i) {
    const nlohmann::json& e = (*events)[i];
    const std::string where = "traceEvents[" + std::to_string(i) + "]";
    if (!e.is_object()) bad(where + " is not an object");
    const std::string ph = e.contains("ph") && e["ph"].is_string() ? e["ph"].get<std::string>() : "";
    // A track per process: its pid is a rank number (a string, a fraction or 2^62 would fold into
    // rank 0's track without a word).
    int pid = 0;
    if (e.contains("pid")) {
      const nlohmann::json& p = e["pid"];
      if (!p.is_number_integer() || p.get<long long>() < 0 || p.get<long long>() > kMaxTimelinePid) {
        bad(where + ": \"pid\" is " + p.dump() + "; it must be a rank number, 0 to " + std::to_string(kMaxTimelinePid));
      }
      pid = p.get<int>();
    }
    if (ph == "M") {
      if (e.value("name", std::string()) == "process_name" && e.contains("args") && e["args"].is_object() &&
          e["args"].contains("name") && e["args"]["name"].is_string()) {
        names[pid] = e["args"]["name"].get<std::string>();
      }
      continue;
    }
    if (ph != "X") continue;
    if (!e.contains("ts") || !e["ts"].is_number() || !e.contains("dur") || !e["dur"].is_number()) {
      bad(where + ": a complete event needs numeric \"ts\" and \"dur\"");
    }
    const double ts = e["ts"].get<double>(), dur = e["dur"].get<double>();
    if (!std::isfinite(ts) || !std::isfinite(dur) || dur < 0) bad(where + ": \"ts\" and \"dur\" must be finite, \"dur\" not negative");
    if (std::abs(ts) > kMaxTimelineMicroseconds || dur > kMaxTimelineMicroseconds) {
      bad(where + ": \"ts\" or \"dur\" is beyond 1e15 microseconds (31 years); the trace's times are microseconds");
    }
    const std::string name = e.contains("name") && e["name"].is_string() ? e["name"].get<std::string>() : "?";
    Acc& a = tracks[pid];
    a.t.pid = pid;
    const auto [at, first_seen] = a.phase_at.try_emplace(name, a.t.phases.size());
    if (first_seen) {
      a.t.phases.emplace_back(name, 0.0);
      a.t.counts.emplace_back(name, 0);
    }
    a.t.phases[at->second].second += dur;
    ++a.t.counts[at->second].second;
    a.first = std::min(a.first, ts);
    a.last = std::max(a.last, ts + dur);
    const long long tid = e.contains("tid") && e["tid"].is_number_integer() ? e["tid"].get<long long>() : 0;
    a.by_thread[tid].emplace_back(ts, ts + dur);
    if (is_communication(name)) a.comm.emplace_back(ts, ts + dur);
    if (is_compute(name)) a.compute.emplace_back(ts, ts + dur);
    ++s.events;
  }
  if (s.events == 0) bad("no complete (\"ph\": \"X\") event");
  for (auto& [pid, a] : tracks) {
    a.t.name = names.count(pid) != 0 ? names[pid] : "pid " + std::to_string(pid);
    a.t.span_us = a.last - a.first;
    a.t.comm_us = union_length(a.comm);
    a.t.compute_us = union_length(a.compute);
    a.t.comm_overlapped_us = overlap_length(a.comm, a.compute);
    for (auto& [tid, spans] : a.by_thread) {
      std::sort(spans.begin(), spans.end());
      double end = -INFINITY;
      for (const auto& [from, to] : spans) {
        if (from < end - 1e-3) ++a.t.overlapping_spans;  // a nanosecond of rounding is not an overlap
        end = std::max(end, to);
      }
    }
    s.tracks.push_back(std::move(a.t));
  }
  return s;
}

}  // namespace scalelab::report
