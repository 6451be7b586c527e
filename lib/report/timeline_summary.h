// Where a step's time went, from a Chrome trace timeline (`train --timeline`, `simulate
// --timeline`; lib/core/trace.h): per track (a rank, or the simulated GPU) the time in each phase,
// its share of the track's span, the communication's share, and how much of the communication ran
// while the track computed (the overlap that bucketed allreduce buys). `scalelab timeline` prints it.
//
//   const TimelineSummary s = summarize_timeline(read_json_file("trace.json"), "trace.json");
//   s.tracks[0].comm_overlapped_us / s.tracks[0].comm_us  -> the hidden fraction of allreduce
#pragma once
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace scalelab::report {

struct TimelineTrack {
  int pid = 0;
  std::string name;                                     // "rank 0" (the process_name metadata), else "pid N"
  double span_us = 0;                                   // first start to last end
  std::vector<std::pair<std::string, double>> phases;   // name -> summed duration (us), in first-seen order
  std::vector<std::pair<std::string, int>> counts;      // name -> events
  double comm_us = 0;             // union of the communication spans (allreduce, communication)
  double compute_us = 0;          // union of the compute spans (forward, backward, optimizer, compute)
  double comm_overlapped_us = 0;  // communication time during which compute ran too
  // Spans that start before the one before them on the same thread (tid) has ended. scalelab's
  // timelines have none (a thread runs one phase at a time); a trace written twice into one file,
  // or another tool's nested spans, make the phases' shares add up to more than 100%.
  int overlapping_spans = 0;
};

struct TimelineSummary {
  std::vector<TimelineTrack> tracks;  // by pid
  int events = 0;
};

// Names counted as communication and as compute.
[[nodiscard]] bool is_communication(const std::string& phase);
[[nodiscard]] bool is_compute(const std::string& phase);

// Reads {"traceEvents": [...]} or a bare array. An input error naming `origin` for anything that is
// not a trace: no events list, an "X" event without a numeric ts/dur or with a negative duration,
// no complete ("X") event at all.
[[nodiscard]] TimelineSummary summarize_timeline(const nlohmann::json& doc, const std::string& origin);

// The total length of the union of intervals [start, end).
[[nodiscard]] double union_length(std::vector<std::pair<double, double>> intervals);
// The length of the intersection of two unions of intervals.
[[nodiscard]] double overlap_length(std::vector<std::pair<double, double>> a, std::vector<std::pair<double, double>> b);

}  // namespace scalelab::report
