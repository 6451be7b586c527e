#include "core/launch_env.h"

#include <cstdlib>
#include <string>

namespace scalelab {
namespace {

bool get_int(const char* name, int& out) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return false;
  char* end = nullptr;
  const long x = std::strtol(v, &end, 10);
  if (end == v || *end != '\0') return false;
  out = static_cast<int>(x);
  return true;
}

}  // namespace

LaunchEnv read_launch_env() {
  LaunchEnv e;
  if (get_int("OMPI_COMM_WORLD_RANK", e.rank)) {
    e.launcher = "mpirun";
    get_int("OMPI_COMM_WORLD_SIZE", e.size);
    get_int("OMPI_COMM_WORLD_LOCAL_RANK", e.local_rank);
    get_int("OMPI_COMM_WORLD_LOCAL_SIZE", e.local_size);
  } else if (get_int("SLURM_PROCID", e.rank)) {
    e.launcher = "srun";
    get_int("SLURM_NTASKS", e.size);
    get_int("SLURM_LOCALID", e.local_rank);
    if (!get_int("SLURM_NTASKS_PER_NODE", e.local_size)) e.local_size = e.size;
  } else if (get_int("PMI_RANK", e.rank)) {
    e.launcher = "pmi";
    get_int("PMI_SIZE", e.size);
    if (!get_int("MPI_LOCALRANKID", e.local_rank)) e.local_rank = e.rank;
    if (!get_int("MPI_LOCALNRANKS", e.local_size)) e.local_size = e.size;
  } else if (get_int("RANK", e.rank)) {
    e.launcher = "torchrun";
    get_int("WORLD_SIZE", e.size);
    if (!get_int("LOCAL_RANK", e.local_rank)) e.local_rank = e.rank;
    if (!get_int("LOCAL_WORLD_SIZE", e.local_size)) e.local_size = e.size;
  }
  return e;
}

}  // namespace scalelab
