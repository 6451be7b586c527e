// A monitoring session beside a child command returns the child's exit status and samples while
// it runs; with --count it ends by itself; a command that cannot start is one clear error.
#include <gtest/gtest.h>

#include <sstream>

#include "core/error.h"
#include "fake_sampler.h"
#include "monitor/session.h"

namespace scalelab::monitor {
namespace {

using testing::FakeSampler;

SessionOptions options(double interval, std::size_t count, std::vector<std::string> command) {
  SessionOptions o;
  o.monitor.interval_s = interval;
  o.monitor.count = count;
  o.monitor.output_name = "session.csv";
  o.command = std::move(command);
  return o;
}

TEST(Session, ReturnsTheChildsExitStatusAndSampledWhileItRan) {
  FakeSampler sampler(1);
  std::ostringstream csv;
  const SessionResult r = run_session(sampler, csv, options(0.01, 0, {"sh", "-c", "sleep 0.2; exit 3"}));
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_FALSE(r.interrupted);
  EXPECT_GE(r.report.samples, 1u);  // the first sample is taken at start
  EXPECT_GE(r.report.seconds, 0.2);
  EXPECT_TRUE(r.report.error.empty());
}

TEST(Session, ChildEndedBySignalReports128PlusTheSignal) {
  FakeSampler sampler(1);
  std::ostringstream csv;
  const SessionResult r = run_session(sampler, csv, options(1, 0, {"sh", "-c", "kill -TERM $$"}));
  EXPECT_EQ(r.exit_code, 128 + 15);
}

TEST(Session, CountEndsTheSessionWithoutAChild) {
  FakeSampler sampler(2);
  std::ostringstream csv;
  const SessionResult r = run_session(sampler, csv, options(0.001, 3, {}));
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.report.samples, 3u);
  EXPECT_EQ(sampler.times().size(), 3u);
}

TEST(Session, CommandThatCannotStartIsAnError) {
  FakeSampler sampler(1);
  std::ostringstream csv;
  try {
    (void)run_session(sampler, csv, options(1, 0, {"/nonexistent/scalelab-no-such-program"}));
    FAIL() << "no error for a missing program";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot start /nonexistent/scalelab-no-such-program"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace scalelab::monitor
