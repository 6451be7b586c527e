// NVLink traffic over a run is the difference of the cumulative counters, divided by the run's
// length for GB/s (GB = 1e9 bytes); GPUs without counters are reported with the driver's reason.
#include <gtest/gtest.h>

#include "monitor/nvlink.h"

namespace scalelab::monitor {
namespace {

NvLinkReading exposed(unsigned gpu, std::vector<NvLinkCounter> links) {
  NvLinkReading r;
  r.index = gpu;
  r.exposed = true;
  r.links = std::move(links);
  return r;
}

TEST(NvLink, TrafficIsTheCounterDifferencePerLink) {
  const std::vector<NvLinkReading> before = {exposed(0, {{0, 1000, 5000}, {3, 7, 9}})};
  const std::vector<NvLinkReading> after = {exposed(0, {{0, 1000 + 8'000'000'000ULL, 5000 + 2'000'000'000ULL},
                                                        {3, 7 + 500, 9}})};
  const double seconds = 4;
  const auto t = nvlink_traffic(before, after, seconds);
  ASSERT_EQ(t.size(), 1u);
  ASSERT_TRUE(t[0].exposed);
  ASSERT_EQ(t[0].links.size(), 2u);
  EXPECT_EQ(t[0].links[0].link, 0u);
  EXPECT_EQ(t[0].links[0].tx_bytes, 8'000'000'000ULL);
  EXPECT_EQ(t[0].links[0].rx_bytes, 2'000'000'000ULL);
  EXPECT_DOUBLE_EQ(t[0].links[0].tx_GBps, 8e9 / seconds / 1e9);
  EXPECT_DOUBLE_EQ(t[0].links[0].rx_GBps, 2e9 / seconds / 1e9);
  EXPECT_EQ(t[0].links[1].link, 3u);
  EXPECT_EQ(t[0].links[1].tx_bytes, 500u);
  EXPECT_EQ(t[0].links[1].rx_bytes, 0u);
}

TEST(NvLink, GpuWithoutCountersIsNotExposedWithTheReason) {
  NvLinkReading none;
  none.index = 1;
  none.reason = "this GPU has no NVLink (nvmlDeviceGetNvLinkState: Not Supported)";
  const auto t = nvlink_traffic({exposed(0, {{0, 0, 0}}), none}, {exposed(0, {{0, 10, 10}}), none}, 1);
  ASSERT_EQ(t.size(), 2u);
  EXPECT_TRUE(t[0].exposed);
  EXPECT_FALSE(t[1].exposed);
  EXPECT_EQ(t[1].reason, none.reason);
  const std::string text = format_nvlink_traffic(t, 1);
  EXPECT_NE(text.find("GPU 1: NVLink counters not exposed: this GPU has no NVLink"), std::string::npos) << text;
  EXPECT_NE(text.find("GPU 0 link  0"), std::string::npos) << text;
}

TEST(NvLink, CountersThatWentBackwardsAreNotReportedAsTraffic) {
  const auto t = nvlink_traffic({exposed(0, {{0, 100, 100}})}, {exposed(0, {{0, 50, 200}})}, 1);
  ASSERT_EQ(t.size(), 1u);
  EXPECT_FALSE(t[0].exposed);
  EXPECT_NE(t[0].reason.find("went backwards"), std::string::npos);
  EXPECT_TRUE(t[0].links.empty());
}

TEST(NvLink, LinkActiveAtOnlyOneEndIsLeftOut) {
  const auto t = nvlink_traffic({exposed(0, {{0, 0, 0}})}, {exposed(0, {{0, 1, 1}, {5, 99, 99}})}, 1);
  ASSERT_EQ(t[0].links.size(), 1u);
  EXPECT_EQ(t[0].links[0].link, 0u);
  const auto none = nvlink_traffic({exposed(0, {{2, 0, 0}})}, {exposed(0, {{5, 1, 1}})}, 1);
  EXPECT_FALSE(none[0].exposed);
}

TEST(NvLink, JsonCarriesBytesAndRates) {
  const auto t = nvlink_traffic({exposed(0, {{1, 0, 0}})}, {exposed(0, {{1, 2'000'000'000ULL, 0}})}, 2);
  const nlohmann::json j = t;
  EXPECT_EQ(j[0]["links"][0]["tx_bytes"], 2'000'000'000ULL);
  EXPECT_DOUBLE_EQ(j[0]["links"][0]["tx_GBps"].get<double>(), 1.0);
  EXPECT_TRUE(j[0]["exposed"].get<bool>());
}

}  // namespace
}  // namespace scalelab::monitor
