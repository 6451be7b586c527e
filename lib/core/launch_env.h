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

// The tasks Slurm runs on node `node` (0-based) by its SLURM_TASKS_PER_NODE ("4(x2),3": 4 on nodes 0
// and 1, 3 on node 2); -1 when the text is malformed or names fewer nodes.
[[nodiscard]] int slurm_tasks_on_node(const std::string& tasks_per_node, int node);

}  // namespace scalelab
