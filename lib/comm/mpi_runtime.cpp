#include "comm/mpi_runtime.h"

#include <mpi.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "core/error.h"

namespace scalelab::comm {

namespace {

// Whether a folder can be made in `dir` (made and removed again): root passes access() checks
// where mkdir still fails (/proc).
bool can_make_folder_in(const std::string& dir) {
  std::string probe = dir + "/scalelab-tmpdir-probe-XXXXXX";
  if (::mkdtemp(probe.data()) == nullptr) return false;
  ::rmdir(probe.c_str());
  return true;
}

}  // namespace

int ensure_mpi_initialized() {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    // Open MPI keeps its session folder under TMPDIR; where it cannot, MPI_Init prints forty lines
    // of its own and aborts. One line instead, naming the variable.
    if (const char* tmp = std::getenv("TMPDIR"); tmp != nullptr && *tmp != '\0' && !can_make_folder_in(tmp)) {
      throw_parameter(ErrorKind::usage, "TMPDIR",
                      std::string(tmp) + ": not a folder this user can write, where MPI keeps its session files; point "
                                         "TMPDIR at one (or unset it)");
    }
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
