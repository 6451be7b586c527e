// Chrome trace JSON serialisation for core/trace.h. Format: the "JSON Object Format" of the
// Trace Event Format document: {"traceEvents": [...], "displayTimeUnit": "ms"}, with "M"
// (metadata) events naming processes and threads and "X" (complete) events for spans.
#include "core/trace.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <numeric>

#include <nlohmann/json.hpp>

#include "core/atomic_file.h"
#include "core/error.h"

namespace scalelab {

std::string chrome_trace_json(const Trace& trace, const TraceLabels& labels) {
  nlohmann::json events = nlohmann::json::array();
  std::vector<int> pids;
  std::vector<std::pair<int, int>> lanes;
  for (const TraceEvent& e : trace.events()) {
    pids.push_back(e.pid);
    lanes.emplace_back(e.pid, e.tid);
  }
  std::sort(pids.begin(), pids.end());
  pids.erase(std::unique(pids.begin(), pids.end()), pids.end());
  std::sort(lanes.begin(), lanes.end());
  lanes.erase(std::unique(lanes.begin(), lanes.end()), lanes.end());
  for (int pid : pids) {
    const std::string name = pid >= 0 && static_cast<std::size_t>(pid) < labels.process_names.size()
                                 ? labels.process_names[static_cast<std::size_t>(pid)]
                                 : "rank " + std::to_string(pid);
    events.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", pid}, {"tid", 0}, {"args", {{"name", name}}}});
    events.push_back({{"name", "process_sort_index"}, {"ph", "M"}, {"pid", pid}, {"tid", 0}, {"args", {{"sort_index", pid}}}});
  }
  for (const auto& [pid, tid] : lanes) {
    if (tid >= 0 && static_cast<std::size_t>(tid) < labels.thread_names.size()) {
      events.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", pid}, {"tid", tid},
                        {"args", {{"name", labels.thread_names[static_cast<std::size_t>(tid)]}}}});
    }
  }
  std::vector<std::size_t> order(trace.events().size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return trace.events()[a].start_us < trace.events()[b].start_us;
  });
  for (std::size_t i : order) {
    const TraceEvent& e = trace.events()[i];
    const std::string name = e.name >= 0 && static_cast<std::size_t>(e.name) < trace.names().size()
                                 ? trace.names()[static_cast<std::size_t>(e.name)]
                                 : "event " + std::to_string(e.name);
    nlohmann::json span = {{"name", name}, {"cat", labels.category}, {"ph", "X"}, {"pid", e.pid}, {"tid", e.tid},
                           {"ts", e.start_us}, {"dur", std::max(0.0, e.duration_us)}};
    if (const std::string& detail = trace.detail_of(e); !detail.empty()) span["args"] = {{"detail", detail}};
    events.push_back(std::move(span));
  }
  nlohmann::json doc;
  doc["traceEvents"] = std::move(events);
  doc["displayTimeUnit"] = "ms";
  return doc.dump();
}

void write_chrome_trace(const std::string& path, const Trace& trace, const TraceLabels& labels) {
  write_file_atomically(path, chrome_trace_json(trace, labels) + "\n", "timeline");
}

}  // namespace scalelab
