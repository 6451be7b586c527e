// GpuMonitor with a scripted sampler: the CSV it writes, the schedule it keeps (never early), how
// fast it stops, what it does when the sampler fails, and its summary and NVLink report.
#include <gtest/gtest.h>

#include <sstream>

#include "core/error.h"
#include "core/timer.h"
#include "fake_sampler.h"
#include "monitor/csv.h"
#include "monitor/monitor.h"

namespace scalelab::monitor {
namespace {

using testing::FakeSampler;

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

MonitorOptions every(double seconds, std::size_t count = 0) {
  MonitorOptions o;
  o.interval_s = seconds;
  o.count = count;
  o.output_name = "test.csv";
  return o;
}

TEST(GpuMonitor, WritesTheHeaderThenOneRowPerGpuPerSample) {
  FakeSampler sampler(2);
  std::ostringstream csv;
  GpuMonitor m(sampler, csv, every(0.001, 3));
  m.start();
  ASSERT_TRUE(m.wait_finished(std::chrono::seconds(60)));
  const MonitorReport r = m.stop();
  EXPECT_EQ(r.samples, 3u);
  const auto l = lines(csv.str());
  ASSERT_EQ(l.size(), 1u + 3 * 2);
  EXPECT_EQ(l[0], csv_header());
  // Sample k, GPU i: utilization 10 k + i (fake_sampler.h).
  for (std::size_t k = 0; k < 3; ++k) {
    for (std::size_t i = 0; i < 2; ++i) {
      const std::string& row = l[1 + 2 * k + i];
      EXPECT_NE(row.find(", " + std::to_string(i) + ", Fake GPU " + std::to_string(i) + ", " +
                         std::to_string(10 * k + i) + " %, " + std::to_string(100 * (k + 1)) + " MiB, 1000 MiB"),
                std::string::npos)
          << row;
    }
  }
}

TEST(GpuMonitor, SummaryAveragesWhatEachGpuReported) {
  FakeSampler sampler(2);
  std::ostringstream csv;
  GpuMonitor m(sampler, csv, every(0.001, 4));
  m.start();
  ASSERT_TRUE(m.wait_finished(std::chrono::seconds(60)));
  const MonitorReport r = m.stop();
  ASSERT_EQ(r.gpus.size(), 2u);
  // Utilization 10 k + i over k = 0..3: mean 15 + i. Memory peaks at 100 x 4. Power 50 + k on GPU 0.
  EXPECT_DOUBLE_EQ(r.gpus[0].mean_utilization_pct, 15.0);
  EXPECT_DOUBLE_EQ(r.gpus[1].mean_utilization_pct, 16.0);
  EXPECT_DOUBLE_EQ(r.gpus[0].max_memory_used_mib, 400.0);
  EXPECT_DOUBLE_EQ(r.gpus[0].memory_total_mib, 1000.0);
  EXPECT_DOUBLE_EQ(r.gpus[0].mean_power_w, 51.5);
  EXPECT_TRUE(std::isnan(r.gpus[1].mean_power_w));  // GPU 1 never reports power
  const nlohmann::json j = r;
  EXPECT_TRUE(j["gpus"][1]["mean_power_w"].is_null());
  EXPECT_EQ(j["samples"], 4);
}

TEST(GpuMonitor, NeverSamplesBeforeItsTurn) {
  // Sample k is due at start + k x interval: busy machines make it later, never earlier.
  FakeSampler sampler(1);
  std::ostringstream csv;
  const double interval = 0.03;
  const double before_start = now_seconds();
  GpuMonitor m(sampler, csv, every(interval, 5));
  m.start();
  ASSERT_TRUE(m.wait_finished(std::chrono::seconds(120)));
  m.stop();
  const auto t = sampler.times();
  ASSERT_EQ(t.size(), 5u);
  for (std::size_t k = 0; k < t.size(); ++k) {
    EXPECT_GE(t[k] - before_start, static_cast<double>(k) * interval - 1e-4) << "sample " << k;
  }
}

TEST(GpuMonitor, StopWakesTheThreadAtOnce) {
  FakeSampler sampler(1);
  std::ostringstream csv;
  GpuMonitor m(sampler, csv, every(3600));  // the next sample is an hour away
  m.start();
  const double deadline = now_seconds() + 60;
  while (m.samples() < 1 && now_seconds() < deadline) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  ASSERT_EQ(m.samples(), 1u);
  const Stopwatch watch;
  const MonitorReport r = m.stop();
  EXPECT_LT(watch.elapsed().value, 10.0);  // an hour if it waited for the interval; milliseconds here
  EXPECT_EQ(r.samples, 1u);
  EXPECT_TRUE(r.error.empty());
  EXPECT_EQ(m.stop().samples, 1u);  // a second stop returns the same report
}

TEST(GpuMonitor, DestructorStopsARunningMonitor) {
  FakeSampler sampler(1);
  std::ostringstream csv;
  const Stopwatch watch;
  {
    GpuMonitor m(sampler, csv, every(3600));
    m.start();
  }
  EXPECT_LT(watch.elapsed().value, 10.0);
}

TEST(GpuMonitor, SamplerFailureEndsSamplingAndIsReported) {
  FakeSampler sampler(1);
  sampler.fail_at(2);
  std::ostringstream csv;
  GpuMonitor m(sampler, csv, every(0.001));
  m.start();
  ASSERT_TRUE(m.wait_finished(std::chrono::seconds(60)));  // it ends by itself
  const MonitorReport r = m.stop();
  EXPECT_EQ(r.samples, 2u);
  EXPECT_NE(r.error.find("fell off the bus"), std::string::npos) << r.error;
  EXPECT_EQ(lines(csv.str()).size(), 1u + 2);
  EXPECT_NE(format_report(r).find("GPU monitor stopped early: GPU 0 fell off the bus"), std::string::npos);
}

TEST(GpuMonitor, NvLinkTrafficIsTheDifferenceBetweenStartAndStop) {
  const std::uint64_t step = 3'000'000'000ULL;
  FakeSampler sampler(2, step);
  std::ostringstream csv;
  GpuMonitor m(sampler, csv, every(0.001, 1));
  m.start();
  ASSERT_TRUE(m.wait_finished(std::chrono::seconds(60)));
  const MonitorReport r = m.stop();
  ASSERT_EQ(r.nvlink.size(), 2u);
  ASSERT_TRUE(r.nvlink[0].exposed);
  ASSERT_EQ(r.nvlink[0].links.size(), 2u);
  // The fake's readings 0 and 1: tx (r + 1) x step, rx twice that.
  EXPECT_EQ(r.nvlink[0].links[1].tx_bytes, step);
  EXPECT_EQ(r.nvlink[0].links[1].rx_bytes, 2 * step);
  EXPECT_DOUBLE_EQ(r.nvlink[0].links[1].tx_GBps, static_cast<double>(step) / r.seconds / 1e9);
  EXPECT_FALSE(r.nvlink[1].exposed);
  EXPECT_NE(format_report(r).find("GPU 1: NVLink counters not exposed"), std::string::npos);
}

TEST(GpuMonitor, IntervalMustBePositive) {
  FakeSampler sampler(1);
  std::ostringstream csv;
  EXPECT_THROW(GpuMonitor(sampler, csv, every(0)), Error);
  EXPECT_THROW(GpuMonitor(sampler, csv, every(-1)), Error);
}

TEST(GpuMonitor, UnwritableStreamFailsAtStart) {
  FakeSampler sampler(1);
  std::ostringstream csv;
  csv.setstate(std::ios::badbit);
  GpuMonitor m(sampler, csv, every(1));
  try {
    m.start();
    FAIL() << "start() accepted a failed stream";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("writing test.csv failed"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace scalelab::monitor
