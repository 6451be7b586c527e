#include "comm/mpi_runtime.h"

#include <mpi.h>

#include "core/error.h"

namespace scalelab::comm {

int ensure_mpi_initialized() {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    int provided = 0;
    if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided) != MPI_SUCCESS) {
      throw_runtime("MPI_Init_thread failed; check the Open MPI installation with 'scalelab info'");
    }
  }
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return size;
}

bool mpi_active() {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  return initialized && !finalized;
}

namespace {
int provided_level() {
  int level = MPI_THREAD_MULTIPLE;
  if (mpi_active()) MPI_Query_thread(&level);
  return level;
}
}  // namespace

bool mpi_serialized_threads() { return provided_level() >= MPI_THREAD_SERIALIZED; }

const char* mpi_thread_level_name() {
  switch (provided_level()) {
    case MPI_THREAD_SINGLE: return "MPI_THREAD_SINGLE";
    case MPI_THREAD_FUNNELED: return "MPI_THREAD_FUNNELED";
    case MPI_THREAD_SERIALIZED: return "MPI_THREAD_SERIALIZED";
    default: return "MPI_THREAD_MULTIPLE";
  }
}

void finalize_mpi() {
  if (mpi_active()) MPI_Finalize();
}

void fail_job(int exit_code) {
  if (!mpi_active()) return;
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size > 1) MPI_Abort(MPI_COMM_WORLD, exit_code);
  MPI_Finalize();
}

}  // namespace scalelab::comm
