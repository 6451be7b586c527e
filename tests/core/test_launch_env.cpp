// Where a rank sits in a job, from the launcher's environment: Slurm's task counts per node.
#include <gtest/gtest.h>

#include <cstdlib>

#include "core/launch_env.h"

namespace scalelab {
namespace {

TEST(LaunchEnv, SlurmTasksPerNodeForms) {
  EXPECT_EQ(slurm_tasks_on_node("4", 0), 4);
  EXPECT_EQ(slurm_tasks_on_node("4(x2)", 1), 4);
  EXPECT_EQ(slurm_tasks_on_node("4(x2),3", 2), 3);
  EXPECT_EQ(slurm_tasks_on_node("2,1", 1), 1);
  EXPECT_EQ(slurm_tasks_on_node("4(x2)", 2), -1);
  for (const char* bad : {"", "x", "4(2)", "4(x)", "4(x2", "4(x2)z", "0"}) EXPECT_EQ(slurm_tasks_on_node(bad, 0), -1) << bad;
  EXPECT_EQ(slurm_tasks_on_node("4,,3", 1), -1);
}

// Under srun with 8 tasks over 2 nodes, rank 5 is the second node's rank 1 of 4.
TEST(LaunchEnv, SrunRankOnItsNode) {
  if (std::getenv("OMPI_COMM_WORLD_RANK") != nullptr) GTEST_SKIP() << "started by mpirun: its variables take precedence";
  ::setenv("SLURM_PROCID", "5", 1);
  ::setenv("SLURM_NTASKS", "8", 1);
  ::setenv("SLURM_LOCALID", "1", 1);
  ::setenv("SLURM_NODEID", "1", 1);
  ::setenv("SLURM_TASKS_PER_NODE", "4(x2)", 1);
  const LaunchEnv e = read_launch_env();
  for (const char* v : {"SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", "SLURM_NODEID", "SLURM_TASKS_PER_NODE"}) ::unsetenv(v);
  EXPECT_EQ(e.launcher, "srun");
  EXPECT_EQ(e.rank, 5);
  EXPECT_EQ(e.size, 8);
  EXPECT_EQ(e.local_rank, 1);
  EXPECT_EQ(e.local_size, 4);  // not 8: before, without --ntasks-per-node, every task counted as local
}

}  // namespace
}  // namespace scalelab
