// The stall watchdog's side channel (comm/watchdog.h): the heartbeat records ranks keep in a
// job-scoped folder, and the report a timed-out rank makes from them.
#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include "comm/watchdog.h"

namespace scalelab::comm {
namespace {

double wall_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// Points $TMPDIR and the job id at a fresh folder for the test's lifetime.
class HeartbeatFolder : public ::testing::Test {
 protected:
  void SetUp() override {
    base_ = std::filesystem::temp_directory_path() / ("scalelab-watchdog-test-" + std::to_string(::getpid()));
    std::filesystem::create_directories(base_);
    if (const char* t = std::getenv("TMPDIR")) old_tmp_ = t;
    ::setenv("TMPDIR", base_.c_str(), 1);
    ::setenv("PMIX_NAMESPACE", "4242", 1);
  }
  void TearDown() override {
    ::unsetenv("PMIX_NAMESPACE");
    if (old_tmp_.empty()) ::unsetenv("TMPDIR");
    else ::setenv("TMPDIR", old_tmp_.c_str(), 1);
    std::filesystem::remove_all(base_);
  }
  std::filesystem::path base_;
  std::string old_tmp_;
};

TEST_F(HeartbeatFolder, TheFolderIsNamedForTheJob) {
  EXPECT_EQ(StallWatchdog::heartbeat_dir(), (base_ / "scalelab-heartbeat-4242").string());
  ::unsetenv("PMIX_NAMESPACE");
  EXPECT_EQ(StallWatchdog::heartbeat_dir(), "");  // no launcher: no side channel
}

TEST_F(HeartbeatFolder, ReportNamesTheRankWhoseProcessStoppedAndWhereEachWas) {
  const std::string dir = StallWatchdog::heartbeat_dir();
  StallWatchdog r0(1000, 0, 3, "training"), r1(1000, 1, 3, "training");
  r1.beat("allreduce", 12);
  r0.beat("allreduce", 13);
  // Both records are fresh now: nobody has stopped responding, so the oldest beat is named (the
  // two stamps can be equal at the clock's resolution: then the earlier step); rank 2 never wrote one.
  const std::string now = StallWatchdog::describe_peers(dir, 0, 3, wall_now());
  EXPECT_EQ(now.rfind("rank 1 stopped making progress", 0), 0u) << now;
  EXPECT_NE(now.find("(last in allreduce, step 12)"), std::string::npos) << now;
  EXPECT_NE(now.find("rank 2 left no heartbeat"), std::string::npos) << now;
  EXPECT_NE(now.find("rank 0 was waiting in allreduce, step 13"), std::string::npos) << now;
  // A minute later without new stamps, both processes count as stopped.
  const std::string later = StallWatchdog::describe_peers(dir, 0, 3, wall_now() + 60);
  EXPECT_NE(later.find("its process stopped responding"), std::string::npos) << later;
  EXPECT_EQ(later.find("was waiting"), std::string::npos) << later;
}

// Under a short stall timeout (3 s) a file 2.5 s old already counts as a stopped process: by the
// time the timeout ends the job, the stopped rank is named, not the oldest beat among the living.
TEST_F(HeartbeatFolder, AShortTimeoutTellsTheStoppedRankSooner) {
  EXPECT_DOUBLE_EQ(StallWatchdog::unresponsive_after(300), 5);
  EXPECT_DOUBLE_EQ(StallWatchdog::unresponsive_after(6), 3);
  EXPECT_DOUBLE_EQ(StallWatchdog::unresponsive_after(3), 2);
  EXPECT_DOUBLE_EQ(StallWatchdog::unresponsive_after(1), 2);
  const std::string dir = StallWatchdog::heartbeat_dir();
  StallWatchdog r0(1000, 0, 2, "training"), r1(1000, 1, 2, "training");
  r0.beat("start barrier", 0);
  r1.beat("start barrier", 0);
  const std::string report = StallWatchdog::describe_peers(dir, 0, 2, wall_now() + 2.5, StallWatchdog::unresponsive_after(3));
  EXPECT_NE(report.find("its process stopped responding"), std::string::npos) << report;
  EXPECT_EQ(StallWatchdog::describe_peers(dir, 0, 2, wall_now() + 2.5).find("its process stopped responding"), std::string::npos)
      << "at the default 5 s, 2.5 s is not yet stopped";
}

TEST_F(HeartbeatFolder, NoReadablePeerGivesNoReport) {
  const std::string dir = StallWatchdog::heartbeat_dir();
  {
    StallWatchdog alone(1000, 0, 2, "training");
    EXPECT_EQ(StallWatchdog::describe_peers(dir, 0, 2, wall_now()), "");  // only its own record
  }
  EXPECT_FALSE(std::filesystem::exists(dir)) << "the last rank out removes the folder";
  EXPECT_EQ(StallWatchdog::describe_peers("", 0, 2, wall_now()), "");
}

// Folders of killed jobs do not pile up: rank 0 of the next job removes those whose every rank
// record is ours and an hour old, and keeps fresh ones and folders holding anything else.
TEST_F(HeartbeatFolder, StaleFoldersOfKilledJobsAreRemoved) {
  // A record as a rank leaves it (the watchdog's layout), stamped `written`.
  const auto leave = [this](const std::string& job, const char* file, double written) {
    struct {
      std::uint64_t magic = 0x31544248534c4353ull;
      char phase[40] = "allreduce";
      std::int64_t step = 3;
      double beat = 0;
      double written = 0;
    } r;
    r.beat = r.written = written;
    const auto dir = base_ / ("scalelab-heartbeat-" + job);
    std::filesystem::create_directories(dir);
    std::ofstream(dir / file, std::ios::binary).write(reinterpret_cast<const char*>(&r), sizeof r);
    return dir;
  };
  const auto killed = leave("killed", "rank-0", wall_now() - 7200);
  (void)leave("killed", "rank-1", wall_now() - 7300);
  const auto running = leave("running", "rank-0", wall_now());
  const auto other = leave("other", "rank-0", wall_now() - 7200);
  std::ofstream(other / "notes.txt") << "not a heartbeat";
  const auto starting = leave("starting", "rank-0", wall_now() - 7200);  // a folder made just now
  const auto empty = base_ / "scalelab-heartbeat-empty";                    // no record at all
  std::filesystem::create_directories(empty);
  const auto two_hours_ago = std::filesystem::file_time_type::clock::now() - std::chrono::hours(2);
  for (const auto& d : {killed, running, other, empty}) std::filesystem::last_write_time(d, two_hours_ago);
  {
    StallWatchdog r0(1000, 0, 2, "training");
  }
  EXPECT_FALSE(std::filesystem::exists(killed));
  EXPECT_TRUE(std::filesystem::exists(running));
  EXPECT_TRUE(std::filesystem::exists(other));
  EXPECT_TRUE(std::filesystem::exists(starting));
  EXPECT_TRUE(std::filesystem::exists(empty));
}

}  // namespace
}  // namespace scalelab::comm
