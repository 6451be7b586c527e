// Combining calibrate's rounds of layer timings (sim/cpu_rate_rounds.h): medians per figure, the
// shared rates from each round's own pair, the spread, and rounds that do not match.
#include <gtest/gtest.h>

#include <algorithm>

#include "core/error.h"
#include "sim/cpu_rate_rounds.h"

namespace scalelab::sim {
namespace {

constexpr auto kConv = static_cast<std::size_t>(LayerKind::conv);
constexpr auto kPool = static_cast<std::size_t>(LayerKind::pool);

// A round whose figures all scale with `speed` (1: the machine's fast state): rates up, time down.
CpuRates round_at(double speed) {
  CpuRates r;
  r.rate[kConv] = 60e9 * speed;
  r.rate[kPool] = 15e9 * speed;
  r.shapes.push_back({LayerKind::conv, {32, 676, 9, 32}, 50e9 * speed});
  r.traffic.push_back({LayerKind::elementwise, 1e6, 20e9 * speed});
  r.fused.push_back({{}, 128, 0.8e-3 / speed});
  return r;
}

// The same round with every figure of ranks computing together `slower` times slower.
CpuRates together(CpuRates r, double slower) {
  r.rate[kConv] /= slower;
  r.rate[kPool] /= slower;
  r.shapes[0].flops_per_s /= slower;
  r.traffic[0].bytes_per_s /= slower;
  r.fused[0].seconds_per_sample *= slower;
  return r;
}

TEST(CpuRateRounds, MedianTakesEachFiguresMiddleRound) {
  const CpuRates m = median_rates({round_at(1.0), round_at(0.75), round_at(0.8)});
  EXPECT_DOUBLE_EQ(m.rate[kConv], 48e9);
  EXPECT_DOUBLE_EQ(m.rate[kPool], 12e9);
  EXPECT_DOUBLE_EQ(m.shapes[0].flops_per_s, 40e9);
  EXPECT_DOUBLE_EQ(m.traffic[0].bytes_per_s, 16e9);
  EXPECT_DOUBLE_EQ(m.fused[0].seconds_per_sample, 1e-3);
  EXPECT_EQ(m.shapes[0].shape.m, 32);  // what a figure measures is kept
}

TEST(CpuRateRounds, SharedRatesComeFromEachRoundsOwnPair) {
  // The machine changes state between rounds; within a round, together is 10% slower than alone.
  // Taken apart, the shared rounds' median (state 0.75) against the alone median (state 1.0)
  // would say 1.47x; paired, the 10% the ranks cost each other remains.
  const std::vector<CpuRates> alone{round_at(1.0), round_at(1.0), round_at(0.75)};
  const std::vector<CpuRates> shared{together(round_at(1.0), 1.1), together(round_at(0.75), 1.1),
                                     together(round_at(0.75), 1.1)};
  const CpuRates s = shared_from_rounds(alone, shared);
  EXPECT_NEAR(s.rate[kConv], 60e9 / 1.1, 1e3);
  EXPECT_NEAR(s.shapes[0].flops_per_s, 50e9 / 1.1, 1e3);
  EXPECT_NEAR(s.traffic[0].bytes_per_s, 20e9 / 1.1, 1e3);
  EXPECT_NEAR(s.fused[0].seconds_per_sample, 0.8e-3 * 1.1, 1e-12);
  const CpuRates unpaired = median_rates(shared);
  EXPECT_LT(unpaired.rate[kConv], 0.7 * 60e9);
}

TEST(CpuRateRounds, AFigureNotMeasuredStaysAsTheSharedRoundsHaveIt) {
  CpuRates a = round_at(1.0), b = together(round_at(1.0), 1.2);
  a.rate[kPool] = 0;
  const CpuRates s = shared_from_rounds({a}, {b});
  EXPECT_DOUBLE_EQ(s.rate[kPool], b.rate[kPool]);
  EXPECT_NEAR(s.rate[kConv], 50e9, 1e3);
}

TEST(CpuRateRounds, SpreadIsTheRoundsRateRange) {
  EXPECT_NEAR(spread({round_at(1.0), round_at(0.8), round_at(0.9)}, LayerKind::conv), 0.25, 1e-12);
  EXPECT_DOUBLE_EQ(spread({round_at(1.0)}, LayerKind::conv), 0.0);
  EXPECT_DOUBLE_EQ(spread({round_at(1.0), round_at(1.0)}, LayerKind::norm), 0.0);  // not measured
}

TEST(CpuRateRounds, SpeedsInvertAFusedRunsSecondsAndGoBack) {
  const CpuRates r = round_at(1.0);
  const std::vector<double> v = speeds(r);
  ASSERT_EQ(v.size(), r.rate.size() + 3);
  EXPECT_DOUBLE_EQ(v[kConv], 60e9);
  EXPECT_DOUBLE_EQ(v.back(), 1.0 / 0.8e-3);  // the fused run: samples per second
  // The slowest of two ranks, figure by figure, as calibrate takes it (an allreduce with min).
  const std::vector<double> other = speeds(together(round_at(1.0), 1.25));
  std::vector<double> slowest(v.size());
  for (std::size_t j = 0; j < v.size(); ++j) slowest[j] = std::min(v[j], other[j]);
  CpuRates s = r;
  set_speeds(s, slowest);
  EXPECT_DOUBLE_EQ(s.rate[kConv], 48e9);
  EXPECT_NEAR(s.fused[0].seconds_per_sample, 1e-3, 1e-15);
  EXPECT_THROW(set_speeds(s, {1.0}), Error);
}

TEST(CpuRateRounds, RoundsThatTimeDifferentLayersAreRefused) {
  CpuRates shorter = round_at(1.0);
  shorter.fused.clear();
  EXPECT_THROW((void)median_rates({round_at(1.0), shorter}), Error);
  EXPECT_THROW((void)shared_from_rounds({round_at(1.0)}, {shorter}), Error);
  EXPECT_THROW((void)shared_from_rounds({round_at(1.0), round_at(1.0)}, {round_at(1.0)}), Error);
  EXPECT_THROW((void)median_rates({}), Error);
}

}  // namespace
}  // namespace scalelab::sim
