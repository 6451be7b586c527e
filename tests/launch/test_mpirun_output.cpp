// MpirunOutput (apps/scalelab/mpirun_output.h) on Open MPI 4.1's banners as mpirun prints them.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "mpirun_output.h"

namespace scalelab::cli {
namespace {

const std::string kDashes(74, '-');

std::string through(const std::vector<std::string>& lines) {
  std::ostringstream out;
  MpirunOutput o(out);
  for (const auto& l : lines) o.line(l);
  o.finish();
  return out.str();
}

const std::vector<std::string> kPrimaryJob = {kDashes, "Primary job  terminated normally, but 1 process returned",
                                              "a non-zero exit code. Per user-direction, the job has been aborted.",
                                              kDashes};
const std::vector<std::string> kNonZero = {
    kDashes, "mpirun detected that one or more processes exited with non-zero status, thus causing",
    "the job to be terminated. The first process to do so was:", "", "  Process name: [[47326,1],1]",
    "  Exit code:    2", kDashes};

std::vector<std::string> cat(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

TEST(MpirunOutput, ARanksErrorLineStandsAloneWithoutTheExitCodeBanners) {
  const auto lines = cat(cat({"error: --batch-size 0: a batch needs at least one sample per rank"}, kPrimaryJob), kNonZero);
  EXPECT_EQ(through(lines), "error: --batch-size 0: a batch needs at least one sample per rank\n");
}

TEST(MpirunOutput, WithoutAnErrorLineTheFirstFailingRankIsNamedInOneLine) {
  EXPECT_EQ(through(cat(cat({"Epoch 1/1"}, kPrimaryJob), kNonZero)),
            "Epoch 1/1\nscalelab run: rank 1 exited with code 2 without an error message\n");
}

TEST(MpirunOutput, ARankEndedBySignalKeepsMpirunsBanner) {
  const std::vector<std::string> signal = {kDashes,
                                           "mpirun noticed that process rank 1 with PID 0 on node vm exited on signal 9 (Killed).",
                                           kDashes};
  EXPECT_EQ(through(cat(kPrimaryJob, signal)), kDashes + "\nmpirun noticed that process rank 1 with PID 0 on node vm exited on "
                                                         "signal 9 (Killed).\n" + kDashes + "\n");
}

TEST(MpirunOutput, OtherLinesAndAnUnfinishedBannerPassAsTheyCame) {
  EXPECT_EQ(through({"a line", "---", "short dashes are text", kDashes, "WARNING: something about the network"}),
            "a line\n---\nshort dashes are text\n" + kDashes + "\nWARNING: something about the network\n");
}

}  // namespace
}  // namespace scalelab::cli
