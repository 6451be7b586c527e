// The CPU-share sampler's arithmetic (core/cpu_share.h) on synthetic /proc-like inputs: parsing
// schedstat and /proc/stat, a rank's run-queue wait and share of a core, steal, the verdict and
// its warning line, and the "load" object of a result file.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/cpu_share.h"

namespace scalelab {
namespace {

TEST(ParseSchedstat, RunAndWaitInSeconds) {
  const auto s = parse_schedstat("2500000000 500000000 1234\n");
  ASSERT_TRUE(s.has_value());
  EXPECT_DOUBLE_EQ(s->run_s, 2.5);
  EXPECT_DOUBLE_EQ(s->wait_s, 0.5);
  EXPECT_DOUBLE_EQ(s->slices, 1234);
}

TEST(ParseSchedstat, RejectsWhatIsNotSchedstat) {
  EXPECT_FALSE(parse_schedstat("").has_value());
  EXPECT_FALSE(parse_schedstat("12345").has_value());
  EXPECT_FALSE(parse_schedstat("abc def 1").has_value());
}

TEST(ParseProcStat, TotalAndSteal) {
  // user nice system idle iowait irq softirq steal guest guest_nice
  const auto t = parse_proc_stat("cpu  100 10 50 800 5 0 5 30 7 0\ncpu0 50 5 25 400 2 0 2 15 3 0\n");
  ASSERT_TRUE(t.has_value());
  EXPECT_DOUBLE_EQ(t->total, 100 + 10 + 50 + 800 + 5 + 0 + 5 + 30);  // guest is inside user already
  EXPECT_DOUBLE_EQ(t->steal, 30);
}

TEST(ParseProcStat, OldKernelsWithoutStealReportNone) {
  const auto t = parse_proc_stat("cpu  100 10 50 800\n");
  ASSERT_TRUE(t.has_value());
  EXPECT_DOUBLE_EQ(t->total, 960);
  EXPECT_DOUBLE_EQ(t->steal, 0);
  EXPECT_FALSE(parse_proc_stat("intr 1 2 3\n").has_value());
  EXPECT_FALSE(parse_proc_stat("").has_value());
}

CpuSample sample(double wall, double cpu, std::map<long, SchedStat> threads, CpuTicks ticks, double load) {
  CpuSample s;
  s.wall_s = wall;
  s.process_cpu_s = cpu;
  s.threads = std::move(threads);
  s.machine = ticks;
  s.load_average = load;
  return s;
}

TEST(RankLoad, MostWaitingThreadSetsTheFigures) {
  // 10 s of wall time. Thread 1 computed 5 s and waited 5 s on a run queue (a busy loop shared its
  // core); thread 2 (a helper) slept; thread 3 started in between and waited 1 s.
  const CpuSample a = sample(100, 20, {{1, {10, 2, 100}}, {2, {1, 0, 10}}}, {1000, 0}, 1.0);
  const CpuSample b = sample(110, 26, {{1, {15, 7, 900}}, {2, {1.1, 0.01, 12}}, {3, {0.5, 1, 50}}}, {3000, 0}, 3.0);
  const RankLoad r = rank_load(a, b, 1);
  EXPECT_TRUE(r.schedstat);
  EXPECT_DOUBLE_EQ(r.wall_s, 10);
  EXPECT_DOUBLE_EQ(r.cpu_s, 6);
  EXPECT_DOUBLE_EQ(r.wait_fraction, 0.5);
  EXPECT_DOUBLE_EQ(r.cpu_share, 0.5);
  EXPECT_DOUBLE_EQ(r.steal_fraction, 0);
  EXPECT_DOUBLE_EQ(r.load_average_start, 1.0);
  EXPECT_DOUBLE_EQ(r.load_average_end, 3.0);
}

TEST(RankLoad, StealIsTheStolenShareOfAllCpuTime) {
  const CpuSample a = sample(0, 0, {{1, {0, 0, 0}}}, {1000, 100}, 1);
  const CpuSample b = sample(1, 1, {{1, {1, 0, 10}}}, {2000, 350}, 1);
  EXPECT_DOUBLE_EQ(rank_load(a, b, 1).steal_fraction, 0.25);
}

TEST(RankLoad, WithoutSchedstatCpuTimeAgainstWallTimesThreads) {
  // 4 threads entitled, 10 s: 40 s of CPU would be every core; 20 s is half of them.
  const CpuSample a = sample(0, 0, {}, {0, 0}, 1);
  const CpuSample b = sample(10, 20, {}, {0, 0}, 1);
  const RankLoad r = rank_load(a, b, 4);
  EXPECT_FALSE(r.schedstat);
  EXPECT_DOUBLE_EQ(r.cpu_share, 0.5);
  EXPECT_DOUBLE_EQ(r.wait_fraction, 0.5);
  EXPECT_TRUE(summarize_load({r}).contended);
  EXPECT_NE(summarize_load({r}).warning.find("received 50% of 4 cores"), std::string::npos);
}

TEST(RankLoad, SchedstatWithoutTimeslicesFallsBackToCpuTime) {
  // A kernel without run-queue statistics: run time moves, wait and timeslices stay 0.
  const CpuSample a = sample(0, 0, {{1, {0, 0, 0}}}, {0, 0}, 1);
  const CpuSample b = sample(10, 4, {{1, {4, 0, 0}}}, {0, 0}, 1);
  const RankLoad r = rank_load(a, b, 1);
  EXPECT_FALSE(r.schedstat);
  EXPECT_DOUBLE_EQ(r.cpu_share, 0.4);
  EXPECT_TRUE(summarize_load({r}).contended);
}

TEST(RankLoad, NoStealFiguresMeansNotReported) {
  CpuSample a = sample(0, 0, {{1, {0, 0, 0}}}, {0, 0}, 1);
  CpuSample b = sample(1, 1, {{1, {1, 0, 10}}}, {0, 0}, 1);
  a.machine.reset();
  EXPECT_DOUBLE_EQ(rank_load(a, b, 1).steal_fraction, -1);
}

RankLoad rank(int number, double wait_fraction, double steal = 0) {
  RankLoad r;
  r.rank = number;
  r.wall_s = 10;
  r.cpu_s = 10 * (1 - wait_fraction);
  r.schedstat = true;
  r.wait_fraction = wait_fraction;
  r.cpu_share = 1 - wait_fraction;
  r.steal_fraction = steal;
  r.load_average_start = 4.5;
  r.load_average_end = 5.5;
  return r;
}

TEST(SummarizeLoad, QuietBelowTheThreshold) {
  const double just_below = kContendedWaitFraction * 0.9;
  const LoadSummary s = summarize_load({rank(0, 0.01), rank(1, just_below)});
  EXPECT_FALSE(s.contended);
  EXPECT_TRUE(s.warning.empty());
}

TEST(SummarizeLoad, NamesTheRankThatGotLeastOfItsCore) {
  const LoadSummary s = summarize_load({rank(0, 0.3), rank(1, 0.59), rank(2, 0.02)});
  EXPECT_TRUE(s.contended);
  EXPECT_EQ(s.warning.rfind("rank 1 received 41% of a core", 0), 0u) << s.warning;
  EXPECT_NE(s.warning.find("other processes were running"), std::string::npos);
  EXPECT_NE(s.warning.find("load average 5.5"), std::string::npos);
  EXPECT_NE(s.warning.find("these timings do not describe this machine"), std::string::npos);
  EXPECT_EQ(s.warning.find('\n'), std::string::npos);  // one line
}

TEST(SummarizeLoad, StealAboveItsThresholdIsContended) {
  const LoadSummary quiet = summarize_load({rank(0, 0.01, kContendedStealFraction * 0.5)});
  EXPECT_FALSE(quiet.contended);
  const LoadSummary s = summarize_load({rank(0, 0.01, 0.3)});
  EXPECT_TRUE(s.contended);
  EXPECT_NE(s.warning.find("30% of the CPUs' time (steal)"), std::string::npos) << s.warning;
}

TEST(SummarizeLoad, AMeasurementTooShortToJudgeIsNotCalledContended) {
  RankLoad brief = rank(0, 0.6, 0.3);
  brief.wall_s = kMinJudgedSeconds / 2;  // a timeslice or two of another process: no verdict
  const LoadSummary s = summarize_load({brief});
  EXPECT_FALSE(s.judged);
  EXPECT_FALSE(s.contended);
  EXPECT_EQ(load_json({brief}).at("verdict"), "too_short");
  // One rank long enough is judged on its own figures.
  const LoadSummary mixed = summarize_load({brief, rank(1, 0.6)});
  EXPECT_TRUE(mixed.contended);
  EXPECT_EQ(mixed.warning.rfind("rank 1 received", 0), 0u) << mixed.warning;
}

TEST(LoadJson, RecordsEveryRankAndTheVerdict) {
  const nlohmann::json j = load_json({rank(0, 0.05), rank(1, 0.6, 0.02)});
  EXPECT_EQ(j.at("verdict"), "contended");
  EXPECT_EQ(j.at("source"), "schedstat");
  ASSERT_EQ(j.at("ranks").size(), 2u);
  EXPECT_EQ(j.at("ranks")[1].at("rank"), 1);
  EXPECT_DOUBLE_EQ(j.at("ranks")[1].at("run_queue_wait_fraction").get<double>(), 0.6);
  EXPECT_DOUBLE_EQ(j.at("ranks")[1].at("cpu_share").get<double>(), 0.4);
  EXPECT_DOUBLE_EQ(j.at("steal_fraction").get<double>(), 0.02);
  EXPECT_DOUBLE_EQ(j.at("load_average_start").get<double>(), 4.5);
  EXPECT_DOUBLE_EQ(j.at("load_average_end").get<double>(), 5.5);
  EXPECT_TRUE(j.at("warning").is_string());
  const nlohmann::json quiet = load_json({rank(0, 0.01)});
  EXPECT_EQ(quiet.at("verdict"), "quiet");
  EXPECT_TRUE(quiet.at("warning").is_null());
}

TEST(CpuShareMeter, ThisProcessHasReadableFigures) {
  const CpuShareMeter meter;
  volatile double x = 0;
  for (int i = 0; i < 20'000'000; ++i) x = x + 1e-9 * i;  // some CPU time to measure
  const RankLoad r = meter.stop();
  EXPECT_GT(r.wall_s, 0);
  EXPECT_GT(r.cpu_s, 0);
  EXPECT_GE(r.wait_fraction, 0);
  EXPECT_LE(r.wait_fraction, 1);  // a share of the wall time
  EXPECT_GT(r.cpu_share, 0);
  EXPECT_LE(r.cpu_share, 1);
}

}  // namespace
}  // namespace scalelab
