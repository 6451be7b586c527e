// run_process, this_executable and find_in_path: the one way scalelab starts another program
// (a scalelab command, mpirun, gnuplot) and finds itself.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

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

}  // namespace
}  // namespace scalelab
