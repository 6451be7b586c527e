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

int slurm_tasks_on_node(const std::string& tasks_per_node, int node) {
  // "4(x2),3": the first two nodes run 4 tasks, the third 3.
  int first = 0;
  std::size_t at = 0;
  while (at < tasks_per_node.size()) {
    const std::size_t comma = tasks_per_node.find(',', at);
    const std::string item = tasks_per_node.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
    char* end = nullptr;
    const long tasks = std::strtol(item.c_str(), &end, 10);
    if (end == item.c_str() || tasks < 1) return -1;
    long repeat = 1;
    if (*end == '(') {
      if (end[1] != 'x') return -1;
      char* close = nullptr;
      repeat = std::strtol(end + 2, &close, 10);
      if (close == end + 2 || *close != ')' || close[1] != '\0' || repeat < 1) return -1;
    } else if (*end != '\0') {
      return -1;
    }
    if (node < first + repeat) return static_cast<int>(tasks);
    first += static_cast<int>(repeat);
    if (comma == std::string::npos) break;
    at = comma + 1;
  }
  return -1;
}

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
    // SLURM_TASKS_PER_NODE is always set ("4(x2)"); SLURM_NTASKS_PER_NODE only with --ntasks-per-node.
    int node = 0;
    get_int("SLURM_NODEID", node);
    const char* per_node = std::getenv("SLURM_TASKS_PER_NODE");
    const int on_node = per_node != nullptr ? slurm_tasks_on_node(per_node, node) : -1;
    if (on_node > 0) e.local_size = on_node;
    else if (!get_int("SLURM_NTASKS_PER_NODE", e.local_size)) e.local_size = e.size;
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
