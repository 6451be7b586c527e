// The nccl backend on a machine without a usable GPU (the build machines and CI): starting it must
// fail with one line naming the cause and suggesting --backend mpi. Where a GPU is present the
// test is skipped: the GPU runs are recorded in docs/gpu-status.md.
#include <gtest/gtest.h>

#include <string>

#include "comm/backends/nccl_communicator.h"
#include "core/error.h"

namespace scalelab::comm {
namespace {

TEST(NcclWithoutGpu, StartingFailsWithOneLineSuggestingMpi) {
  try {
    const int n = cuda_device_count_or_throw();
    GTEST_SKIP() << n << " GPU(s) present: this test covers machines without one";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_EQ(e.kind(), ErrorKind::runtime);
    EXPECT_EQ(e.parameter(), "backend") << m;
    EXPECT_NE(m.find("use mpi"), std::string::npos) << m;
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
  }
  EXPECT_THROW(run_nccl_single_process(1, [](Communicator&) {}), Error);
}

}  // namespace
}  // namespace scalelab::comm
