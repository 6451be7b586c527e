// BucketedAverager (gpu/bucketed_averager.h) under mpiexec, one process per GPU as training runs
// it (comm::make_nccl_communicator): the averaged buffer equals the plain mean over ranks
// (test_bucketed_averager_check.h), float32 and float16. Every rank decides together whether the
// node has a GPU for each local rank, and all skip when it has not (CI, build hosts).
#include <gtest/gtest.h>
#include <mpi.h>

#include "test_bucketed_averager_check.h"

namespace scalelab::gpu::test {
namespace {

// Empty when every rank of the job has a GPU of its own, else why not (the same on every rank).
std::string job_without_gpus() {
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int local_rank = 0;
  MPI_Comm_rank(node, &local_rank);
  MPI_Comm_free(&node);
  const std::string reason = no_device_reason();
  int count = 0;
  if (reason.empty()) cudaGetDeviceCount(&count);
  int ok = (reason.empty() && local_rank < count) ? 1 : 0;
  int all_ok = 0;
  MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (all_ok) return "";
  return reason.empty() ? "more ranks on a node than GPUs" : "no usable CUDA device: " + reason;
}

TEST(BucketedAveragerMpi, Float32MatchesThePlainMean) {
  const std::string reason = job_without_gpus();
  if (!reason.empty()) GTEST_SKIP() << reason;
  auto comm = comm::make_nccl_communicator();
  check_averaging(*comm, 256 << 10, false, ReadyOrder::backward);
}

TEST(BucketedAveragerMpi, Float16MatchesThePlainMeanWithinHalfPrecision) {
  const std::string reason = job_without_gpus();
  if (!reason.empty()) GTEST_SKIP() << reason;
  auto comm = comm::make_nccl_communicator();
  check_averaging(*comm, 0, true, ReadyOrder::backward);
}

}  // namespace
}  // namespace scalelab::gpu::test
