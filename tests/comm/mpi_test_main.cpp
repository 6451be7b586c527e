// main() for the GoogleTest executables that run under mpiexec (scalelab_add_mpi_test): MPI is
// initialised before the tests and finalised after them, only rank 0 prints the report, and the
// exit code is the worst over all ranks, so a test that failed on rank 2 alone fails the run.
#include <gtest/gtest.h>
#include <mpi.h>

#include "comm/mpi_runtime.h"

int main(int argc, char** argv) {
  scalelab::comm::ensure_mpi_initialized();
  ::testing::InitGoogleTest(&argc, argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  int rc = RUN_ALL_TESTS() != 0 ? 1 : 0;
  int worst = rc;
  MPI_Allreduce(&rc, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  scalelab::comm::finalize_mpi();
  return worst;
}
