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
  for (const char* kind : {"scale.json", "simulate.json", "converge.json"}) {
    EXPECT_EQ(chart_of_records({{kind, fixture(kind)}}).key, "below") << kind;
  }
}

}  // namespace
}  // namespace scalelab::cli
