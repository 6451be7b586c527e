// core/trace.h writes what Chrome and Perfetto read: "X" events with ts/dur in microseconds,
// process names per rank, events sorted by time.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/trace.h"

using namespace scalelab;

TEST(Trace, ChromeJsonHasNamedTracksAndSortedCompleteEvents) {
  Trace t({"forward", "allreduce"});
  t.add(1, 1, 0, 30.0, 5.0);
  t.add(0, 0, 0, 10.0, 20.0);
  TraceLabels labels;
  labels.process_names = {"rank 0", "rank 1"};
  labels.thread_names = {"training loop"};
  const auto doc = nlohmann::json::parse(chrome_trace_json(t, labels));
  ASSERT_TRUE(doc.contains("traceEvents"));
  std::vector<nlohmann::json> spans, names;
  for (const auto& e : doc["traceEvents"]) {
    if (e["ph"] == "X") spans.push_back(e);
    if (e["ph"] == "M" && e["name"] == "process_name") names.push_back(e);
  }
  ASSERT_EQ(spans.size(), 2u);
  EXPECT_EQ(spans[0]["name"], "forward");
  EXPECT_EQ(spans[0]["pid"], 0);
  EXPECT_DOUBLE_EQ(spans[0]["ts"].get<double>(), 10.0);
  EXPECT_DOUBLE_EQ(spans[0]["dur"].get<double>(), 20.0);
  EXPECT_EQ(spans[1]["name"], "allreduce");
  EXPECT_EQ(spans[1]["pid"], 1);
  ASSERT_EQ(names.size(), 2u);
  EXPECT_EQ(names[1]["args"]["name"], "rank 1");
  EXPECT_FALSE(spans[0].contains("args")) << "a span without a detail has no args";
}

// A span's detail is its args' "detail"; spans without one, and an event copied from another
// Trace (shipped from another rank), whose detail index would point into this Trace's table, have none.
TEST(Trace, ASpansDetailIsItsArgs) {
  Trace t({"forward", "backward"});
  t.add(0, 0, 0, 0.0, 5.0, "conv2d (conv)");
  t.add(1, 0, 0, 5.0, 10.0);
  t.add(TraceEvent{1, 0, 0, 1, 15.0, 1.0});  // another Trace's detail 1: not this one's "conv2d (conv)"
  const auto doc = nlohmann::json::parse(chrome_trace_json(t, TraceLabels{}));
  std::vector<nlohmann::json> spans;
  for (const auto& e : doc["traceEvents"]) {
    if (e["ph"] == "X") spans.push_back(e);
  }
  ASSERT_EQ(spans.size(), 3u);
  EXPECT_EQ(spans[0]["args"]["detail"], "conv2d (conv)");
  EXPECT_FALSE(spans[1].contains("args"));
  EXPECT_FALSE(spans[2].contains("args"));
}
