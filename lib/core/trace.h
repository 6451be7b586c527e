// Timelines in Chrome trace JSON (the format chrome://tracing and https://ui.perfetto.dev open),
// written by the trainer for its measured steps (lib/train/timeline.h). One process track per
// rank ("rank 0", "rank 1", ...), one thread track per lane inside it; each event is a complete
// span ("ph": "X") with a name from a small fixed table.
//
//   Trace trace({"data wait", "forward", "backward", "allreduce", "optimizer"});
//   trace.reserve(4096);                      // once: recording then never allocates
//   trace.add(/*name=*/1, /*pid=*/rank, /*tid=*/0, start_us, duration_us);
//   write_chrome_trace("timeline.json", {trace_rank0, trace_rank1}, {"rank 0", "rank 1"});
//
// Events are plain data (TraceEvent) so a rank can ship its events to rank 0 as bytes; every
// rank builds its Trace with the same name table, so name ids agree across ranks. An event may
// carry a detail, a line of text the trace shows as the event's args ("detail": the layer a
// simulated span prices); details stay in the Trace that recorded them and are not shipped.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace scalelab {

struct TraceEvent {
  std::int32_t name = 0;  // index into the Trace's name table
  std::int32_t pid = 0;   // process track (rank)
  std::int32_t tid = 0;   // thread track inside it (lane)
  std::int32_t detail = 0;  // 0: none; else 1 + its index in the Trace's detail table
  double start_us = 0.0;  // microseconds since the trace's origin
  double duration_us = 0.0;
};
static_assert(sizeof(TraceEvent) == 32, "TraceEvent is shipped between ranks as raw bytes");

class Trace {
 public:
  explicit Trace(std::vector<std::string> names) : names_(std::move(names)) {}
  // Capacity for n events; add() beyond it still works but allocates.
  void reserve(std::size_t n) { events_.reserve(n); }
  void add(int name, int pid, int tid, double start_us, double duration_us) {
    events_.push_back(TraceEvent{name, pid, tid, 0, start_us, duration_us});
  }
  // The same with a detail (allocates: for traces written once, not for recording steps).
  void add(int name, int pid, int tid, double start_us, double duration_us, std::string detail) {
    details_.push_back(std::move(detail));
    events_.push_back(TraceEvent{name, pid, tid, static_cast<std::int32_t>(details_.size()), start_us, duration_us});
  }
  // An event recorded elsewhere (another rank's, shipped as bytes): its detail, an index into the
  // recording Trace's table, means nothing here and is dropped.
  void add(const TraceEvent& e) {
    events_.push_back(e);
    events_.back().detail = 0;
  }
  [[nodiscard]] const std::vector<std::string>& names() const { return names_; }
  [[nodiscard]] const std::vector<TraceEvent>& events() const { return events_; }
  [[nodiscard]] std::vector<TraceEvent>& events() { return events_; }
  // The detail of an event, "" when it has none (or one recorded by another Trace).
  [[nodiscard]] const std::string& detail_of(const TraceEvent& e) const {
    static const std::string none;
    return e.detail > 0 && static_cast<std::size_t>(e.detail) <= details_.size() ? details_[static_cast<std::size_t>(e.detail) - 1] : none;
  }

 private:
  std::vector<std::string> names_;
  std::vector<TraceEvent> events_;
  std::vector<std::string> details_;
};

// Optional labels: a name for each process track (by pid) and for each lane (by tid).
struct TraceLabels {
  std::vector<std::string> process_names;  // process_names[pid], e.g. "rank 0"
  std::vector<std::string> thread_names;   // thread_names[tid], e.g. "compute"
  std::string category = "scalelab";       // the "cat" field of every event
};

// The Chrome trace JSON document for `trace` (events sorted by start time, names resolved).
[[nodiscard]] std::string chrome_trace_json(const Trace& trace, const TraceLabels& labels);
// Writes it to `path` atomically (temporary file, then rename). Errors name the path.
void write_chrome_trace(const std::string& path, const Trace& trace, const TraceLabels& labels);

}  // namespace scalelab
