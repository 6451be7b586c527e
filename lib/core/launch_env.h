// Where this process sits in a job, read from the environment the launcher left: Open MPI's
// mpirun (OMPI_COMM_WORLD_*), Slurm's srun (SLURM_PROCID ...), PMI (PMI_RANK ...), or
// torchrun-style RANK/WORLD_SIZE/LOCAL_RANK. Used by `scalelab info` and to pin devices
// before MPI is initialised.
#pragma once
#include <string>

namespace scalelab {

struct LaunchEnv {
  int rank = 0;
  int size = 1;
  int local_rank = 0;
  int local_size = 1;
  std::string launcher = "none";  // "mpirun", "srun", "pmi", "torchrun" or "none"
};

[[nodiscard]] LaunchEnv read_launch_env();

}  // namespace scalelab
