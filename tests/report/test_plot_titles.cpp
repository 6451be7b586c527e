// The titles and styles `scalelab plot` gives each record kind (apps/scalelab/plot_records.h): a
// scale record that carries a prediction is titled "measured and predicted", not "measured"
// only, and its prediction is dashed; byte-size axes are labelled by size.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "plot_records.h"

namespace scalelab::cli {
namespace {

nlohmann::json fixture(const std::string& name) {
  std::ifstream in(std::string(SCALELAB_REPORT_TEST_DATA) + "/" + name);
  return nlohmann::json::parse(in);
}

TEST(PlotTitles, ScaleRecordWithAPredictionSaysSo) {
  nlohmann::json doc = fixture("scale.json");
  report::Chart c = chart_of_records({{"scale.json", doc}});
  ASSERT_EQ(c.series.size(), 2u);
  EXPECT_NE(c.title.find("(measured and predicted"), std::string::npos) << c.title;
  EXPECT_EQ(c.series[1].label, "predicted");
  EXPECT_EQ(c.series[1].dashtype, 2) << "the prediction must stay visible where it meets the measurement";

  for (auto& row : doc["rows"]) row["predicted"] = nullptr;  // a run without --predict
  c = chart_of_records({{"scale.json", doc}});
  ASSERT_EQ(c.series.size(), 1u);
  EXPECT_NE(c.title.find("(measured"), std::string::npos) << c.title;
  EXPECT_EQ(c.title.find("predicted"), std::string::npos) << c.title;
}

TEST(PlotTitles, ByteAxesAreLabelledBySizeAndLegendsStayOutside) {
  const report::Chart c = chart_of_records({{"predict.json", fixture("predict.json")}});
  EXPECT_TRUE(c.x_bytes);
  EXPECT_TRUE(c.x_format.empty());
  EXPECT_EQ(c.key, "below");
  for (const char* kind : {"scale.json", "simulate.json", "converge.json", "calibration.json", "pipeline.json"}) {
    EXPECT_EQ(chart_of_records({{kind, fixture(kind)}}).key, "below") << kind;
  }
}

// Calibration: the exchange, reduction and copy, each with buffers reused (solid) and through
// memory (dashed), on byte and log axes. Pipeline: one line per augmentation and IDCT against
// whole worker counts, from zero.
TEST(PlotTitles, CalibrationAndPipelineRecordsAreDrawn) {
  const report::Chart cal = chart_of_records({{"calibration.json", fixture("calibration.json")}});
  ASSERT_EQ(cal.series.size(), 6u);
  EXPECT_EQ(cal.series[0].label, "exchange, buffers reused");
  EXPECT_EQ(cal.series[1].label, "exchange, through memory");
  EXPECT_EQ(cal.series[1].dashtype, 2);
  EXPECT_TRUE(cal.x_bytes && cal.log_x && cal.log_y);
  EXPECT_NE(cal.title.find("calibration"), std::string::npos) << cal.title;

  const report::Chart pipe = chart_of_records({{"pipeline.json", fixture("pipeline.json")}});
  ASSERT_EQ(pipe.series.size(), 4u);  // simple/complex x accurate/fast
  for (const auto& s : pipe.series) EXPECT_EQ(s.points.size(), 2u) << s.label;  // 1 and 2 workers
  EXPECT_EQ(pipe.x_tics, (std::vector<double>{1, 2}));
  EXPECT_TRUE(pipe.y_from_zero);
}

}  // namespace
}  // namespace scalelab::cli
