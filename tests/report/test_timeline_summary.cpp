// Timeline summaries: phase totals per track, the communication's union, and the part of it that
// ran while the track computed; malformed traces named.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "report/timeline_summary.h"

namespace scalelab::report {
namespace {

using nlohmann::json;

json span(const char* name, int pid, int tid, double ts, double dur) {
  return {{"name", name}, {"ph", "X"}, {"pid", pid}, {"tid", tid}, {"ts", ts}, {"dur", dur}};
}

TEST(TimelineSummary, IntervalsUnionAndOverlap) {
  EXPECT_DOUBLE_EQ(union_length({{0, 10}, {5, 15}, {20, 30}}), 25);
  EXPECT_DOUBLE_EQ(union_length({}), 0);
  EXPECT_DOUBLE_EQ(overlap_length({{0, 10}, {20, 30}}, {{5, 25}}), 10);
  EXPECT_DOUBLE_EQ(overlap_length({{0, 10}}, {{10, 20}}), 0);
}

// Rank 0 overlaps 3 of its 4 us of allreduce with backward; rank 1 none. Phases keep the order
// they first appear in.
TEST(TimelineSummary, PhasesAndOverlapPerTrack) {
  json doc;
  doc["traceEvents"] = {
      {{"name", "process_name"}, {"ph", "M"}, {"pid", 0}, {"args", {{"name", "rank 0"}}}},
      span("forward", 0, 0, 0, 2),  span("backward", 0, 0, 2, 6), span("allreduce", 0, 1, 5, 4),
      span("backward", 0, 0, 9, 1), span("forward", 1, 0, 0, 2),  span("allreduce", 1, 0, 2, 3),
  };
  const TimelineSummary s = summarize_timeline(doc, "t.json");
  ASSERT_EQ(s.tracks.size(), 2u);
  EXPECT_EQ(s.events, 6);
  const TimelineTrack& r0 = s.tracks[0];
  EXPECT_EQ(r0.name, "rank 0");
  EXPECT_DOUBLE_EQ(r0.span_us, 10);
  ASSERT_EQ(r0.phases.size(), 3u);
  EXPECT_EQ(r0.phases[1].first, "backward");
  EXPECT_DOUBLE_EQ(r0.phases[1].second, 7);
  EXPECT_EQ(r0.counts[1].second, 2);
  EXPECT_DOUBLE_EQ(r0.comm_us, 4);
  EXPECT_DOUBLE_EQ(r0.comm_overlapped_us, 3);
  EXPECT_EQ(s.tracks[1].name, "pid 1");
  EXPECT_DOUBLE_EQ(s.tracks[1].comm_overlapped_us, 0);
  // Spans on different threads of one rank overlap freely; none overlaps on one thread.
  EXPECT_EQ(r0.overlapping_spans, 0);
  EXPECT_EQ(s.tracks[1].overlapping_spans, 0);
}

// A trace written twice into one file: every span has a twin on its thread, counted, so that the
// command can warn that the shares add up to more than 100%.
TEST(TimelineSummary, SpansOverlappingOnOneThreadAreCounted) {
  json doc;
  doc["traceEvents"] = {span("forward", 0, 0, 0, 2), span("backward", 0, 0, 2, 6), span("forward", 0, 0, 0, 2),
                        span("backward", 0, 0, 2, 6)};
  EXPECT_EQ(summarize_timeline(doc, "t.json").tracks[0].overlapping_spans, 2);
}

TEST(TimelineSummary, MalformedTracesAreNamed) {
  const auto message = [](const json& doc) {
    try {
      (void)summarize_timeline(doc, "t.json");
    } catch (const Error& e) {
      EXPECT_EQ(e.exit_code(), 2);
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message(json{{"rows", 1}}).find("t.json: not a Chrome trace"), std::string::npos);
  EXPECT_NE(message(json::array()).find("no complete (\"ph\": \"X\") event"), std::string::npos);
  EXPECT_NE(message(json::array({{{"ph", "X"}, {"ts", "0"}, {"dur", 1}}})).find("traceEvents[0]: a complete event needs numeric"),
            std::string::npos);
  EXPECT_NE(message(json::array({span("forward", 0, 0, 0, -1)})).find("not negative"), std::string::npos);
  EXPECT_NE(message(json::array({1})).find("traceEvents[0] is not an object"), std::string::npos);
  // A pid that is no rank would fold into rank 0's track; times past 31 years are damage.
  json e = span("forward", 0, 0, 0, 1);
  for (const json& pid : {json("1"), json(1.5), json(1LL << 62), json(-1)}) {
    e["pid"] = pid;
    EXPECT_NE(message(json::array({e})).find("traceEvents[0]: \"pid\" is " + pid.dump() + "; it must be a rank number"),
              std::string::npos)
        << pid.dump();
  }
  e = span("forward", 0, 0, 0, 1e308);
  EXPECT_NE(message(json::array({e})).find("beyond 1e15 microseconds"), std::string::npos);
}

}  // namespace
}  // namespace scalelab::report
