// run_process, this_executable and find_in_path: the one way scalelab starts another program
// (a scalelab command, mpirun, gnuplot) and finds itself.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include "core/error.h"
#include "core/process.h"

namespace scalelab {
namespace {

TEST(Process, ExitCodeOfTheChildIsReturned) {
  const std::string sh = find_in_path("sh");
  ASSERT_FALSE(sh.empty()) << "no sh in PATH";
  EXPECT_EQ(run_process({sh, "-c", "exit 0"}), 0);
  EXPECT_EQ(run_process({sh, "-c", "exit 3"}), 3);
}

TEST(Process, SignalEndingTheChildIs128PlusItsNumber) {
  const std::string sh = find_in_path("sh");
  ASSERT_FALSE(sh.empty());
  EXPECT_EQ(run_process({sh, "-c", "kill -TERM $$"}), 128 + 15);
}

TEST(Process, RunsInTheWorkingDirectoryGiven) {
  const std::string sh = find_in_path("sh");
  ASSERT_FALSE(sh.empty());
  const auto dir = std::filesystem::temp_directory_path();
  EXPECT_EQ(run_process({sh, "-c", "test \"$(pwd -P)\" = \"" + std::filesystem::canonical(dir).string() + "\""},
                        dir.string()),
            0);
}

TEST(Process, AMissingProgramIsARuntimeErrorNamingIt) {
  try {
    (void)run_process({"/nonexistent/program"});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::runtime);
    EXPECT_NE(std::string(e.what()).find("/nonexistent/program"), std::string::npos) << e.what();
  }
}

TEST(Process, ThisExecutableIsThisTestBinary) {
  const std::filesystem::path self = this_executable();
  EXPECT_TRUE(std::filesystem::exists(self));
  EXPECT_EQ(self.filename(), "core_unit_tests");
}

// This test binary is not scalelab, so the lab executables' rule applies: $SCALELAB_BIN, else the
// scalelab beside it (there is none in the test folder).
TEST(Process, ScalelabBinaryOutsideScalelabIsTheEnvironmentsOrAUsageError) {
  const std::string sh = find_in_path("sh");
  ASSERT_FALSE(sh.empty());
  ::setenv("SCALELAB_BIN", sh.c_str(), 1);
  EXPECT_EQ(scalelab_binary(), sh);
  ::setenv("SCALELAB_BIN", "/nonexistent/scalelab", 1);
  try {
    (void)scalelab_binary();
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::usage);
    EXPECT_NE(std::string(e.what()).find("SCALELAB_BIN=/nonexistent/scalelab"), std::string::npos) << e.what();
  }
  ::unsetenv("SCALELAB_BIN");
  if (!std::filesystem::exists(std::filesystem::path(this_executable()).parent_path() / "scalelab")) {
    EXPECT_THROW((void)scalelab_binary(), Error);
  }
}

TEST(Process, FindInPathSaysNothingForAMissingProgram) { EXPECT_EQ(find_in_path("no-such-program-here"), ""); }


double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + 1e-6 * static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

// With SIGCHLD ignored the kernel reaps the child itself and waitpid fails with ECHILD once it
// has ended: run_process must report that, not retry waitpid in a busy loop.
TEST(Process, IgnoredSigchldEndsTheWaitWithAnErrorWithoutSpinning) {
  const std::string sleep = find_in_path("sleep");
  ASSERT_FALSE(sleep.empty());
  struct sigaction ignore {}, old {};
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  sigaction(SIGCHLD, &ignore, &old);
  const double cpu0 = cpu_seconds();
  const auto t0 = std::chrono::steady_clock::now();
  bool threw = false;
  try {
    (void)run_process({sleep, "1"});
  } catch (const Error& e) {
    threw = true;
    EXPECT_NE(std::string(e.what()).find("waiting for"), std::string::npos) << e.what();
  }
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double cpu = cpu_seconds() - cpu0;
  sigaction(SIGCHLD, &old, nullptr);
  EXPECT_TRUE(threw) << "the child's status cannot be known with SIGCHLD ignored";
  EXPECT_LT(wall, 30.0);  // it returns once the 1 s child has ended (generous bound for a loaded machine)
  EXPECT_LT(cpu, 0.5 * wall) << "waiting used " << cpu << " s of CPU in " << wall << " s: a busy loop";
}

// SIGTERM to a process running a child with forwarding: the child gets it, run_process waits for
// the child and returns 128 + 15 (as `scalelab run` then exits, leaving no mpirun behind).
TEST(Process, ForwardedSignalEndsTheChildAndIs128PlusItsNumber) {
  const std::string sh = find_in_path("sh");
  ASSERT_FALSE(sh.empty());
  const auto marker = std::filesystem::temp_directory_path() / ("scalelab-forward-" + std::to_string(::getpid()));
  const auto ready = std::filesystem::path(marker.string() + ".ready");
  std::filesystem::remove(marker);
  std::filesystem::remove(ready);
  // The signal goes once the child has set its trap (it says so with a file), however slowly
  // it starts on a loaded machine.
  std::thread killer([ready] {
    for (int i = 0; i < 600 && !std::filesystem::exists(ready); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    ::kill(::getpid(), SIGTERM);
  });
  // The child records that it got SIGTERM, then ends by it; it would otherwise sleep for 60 s.
  const auto t0 = std::chrono::steady_clock::now();
  const int rc = run_process({sh, "-c", "trap 'touch " + marker.string() + "; kill $!; trap - TERM; kill -TERM $$' TERM; "
                                            "touch " + ready.string() + "; sleep 60 & wait"},
                             "", true);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  killer.join();
  EXPECT_EQ(rc, 128 + SIGTERM);
  EXPECT_TRUE(std::filesystem::exists(marker)) << "the child did not receive SIGTERM";
  EXPECT_LT(wall, 30.0);
  std::filesystem::remove(marker);
  std::filesystem::remove(ready);
  // The handler is gone again: the default disposition is back.
  struct sigaction now {};
  sigaction(SIGTERM, nullptr, &now);
  EXPECT_EQ(now.sa_handler, SIG_DFL);
}

// With forwarding, the child also ends when the process that started it is killed outright
// (SIGKILL cannot be forwarded): `scalelab run` killed so leaves no mpirun running on.
TEST(Process, ForwardingChildEndsWhenItsStarterIsKilled) {
  const std::string sh = find_in_path("sh");
  ASSERT_FALSE(sh.empty());
  const auto pidfile = std::filesystem::temp_directory_path() / ("scalelab-tied-" + std::to_string(::getpid()));
  std::filesystem::remove(pidfile);
  const pid_t starter = ::fork();
  ASSERT_GE(starter, 0);
  if (starter == 0) {  // never returns into the test suite, whatever run_process does
    try {
      (void)run_process({sh, "-c", "echo $$ > " + pidfile.string() + ".part && mv " + pidfile.string() + ".part " +
                                       pidfile.string() + " && exec sleep 60"},
                        "", true);
    } catch (...) {
      ::_exit(1);
    }
    ::_exit(0);
  }
  pid_t child = 0;
  for (int i = 0; i < 600 && child == 0; ++i) {
    std::ifstream in(pidfile);
    if (!(in >> child)) child = 0;
    if (child == 0) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_GT(child, 0) << "the child never started";
  ::kill(starter, SIGKILL);
  ::waitpid(starter, nullptr, 0);
  // Gone, or a zombie waiting for init to reap it: either way no longer running.
  const auto running = [child] {
    std::ifstream stat("/proc/" + std::to_string(child) + "/stat");
    std::string text;
    if (!std::getline(stat, text)) return false;
    const auto close = text.rfind(')');
    return close != std::string::npos && close + 2 < text.size() && text[close + 2] != 'Z';
  };
  bool ended = false;
  for (int i = 0; i < 200 && !ended; ++i) {
    ended = !running();
    if (!ended) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  if (!ended && running()) ::kill(child, SIGKILL);  // still the sleep we started: not a reused pid
  EXPECT_TRUE(ended) << "the child ran on after its starter was killed";
  std::filesystem::remove(pidfile);
}

TEST(Process, AMissingProgramWithForwardingIsARuntimeErrorNamingIt) {
  try {
    (void)run_process({"/no/such/program"}, "", true);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot start /no/such/program"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace scalelab
