// What a cluster's Slurm expects of a GPU job, read from the "slurm" section of its machine file
// in the catalog (data/machines/puhti.json, mahti.json, lumi-g.json, cluster-h100.json; format in
// docs/machine-format.md, each figure cited in docs/clusters.md), or the built-in "generic" site
// (no partitions, GPUs per node as asked). lib/cluster/slurm_script.h writes the job script.
//
//   const SlurmSite site = load_slurm_site("puhti");
//   site.partitions[0].name  -> "gputest" (15 minutes, 2 nodes, 8 GPUs)
#pragma once
#include <string>
#include <vector>

namespace scalelab::cluster {

struct SlurmPartition {
  std::string name;        // "gputest"
  long long max_seconds = 0;  // wall-time limit
  int max_nodes = 0;
  int max_gpus = 0;        // 0: nodes x GPUs per node
};

// How a job asks for GPUs: "--gres=gpu:<gres_name>:<G>" (CSC) or "--gpus-per-node=<G>".
enum class GpuRequest { gres, gpus_per_node };

struct SlurmSite {
  std::string cluster;        // "puhti"
  std::string machine;        // the catalog machine it describes ("puhti"), "" for generic
  std::string title;          // the machine's title
  int gpus_per_node = 0;      // GPUs (or GCDs) a node has; 0 for generic (any)
  int nodes = 0;              // nodes the cluster has; 0 for generic (any)
  GpuRequest gpu_request = GpuRequest::gpus_per_node;
  std::string gres_name;      // "v100"
  int cores_per_gpu = 0;      // CPU cores to ask for per GPU (the site's largest share); 0: none
  int memory_GiB_per_node = 0;   // memory to ask for, per node with every GPU (scaled to the GPUs asked); 0: the site's default
  bool whole_nodes = false;   // the site allocates whole nodes (no --mem, no core count)
  std::string srun_mpi;       // srun --mpi=<this>; "" uses the site's default plugin
  std::string cpu_bind;       // srun --cpu-bind=<this>; "" none
  std::string device_variable;  // set to SLURM_LOCALID for each rank (ROCR_VISIBLE_DEVICES); "" none
  std::string modules;        // a line loading the site's modules, "" none
  bool account_required = false;  // every job names a billing project (--account)
  bool containers = false;    // Pyxis/Enroot: --container-image and --container-mounts on srun
  std::vector<SlurmPartition> partitions;  // in the order they are tried (smallest first); none: the site's default
  std::vector<std::string> sources;        // where these facts come from
};

// "puhti", "mahti", "lumi-g", "dgx" or "generic"; anything else is an input error listing them.
[[nodiscard]] SlurmSite load_slurm_site(const std::string& cluster);
// The clusters load_slurm_site knows, in order.
[[nodiscard]] std::vector<std::string> slurm_cluster_names();

// "HH:MM:SS", "MM:SS", "D-HH[:MM[:SS]]" or minutes, as sbatch reads --time, in seconds; an input
// error naming `parameter` for anything else.
[[nodiscard]] long long parse_slurm_time(const std::string& text, const std::string& parameter);
// Seconds as sbatch writes them: "D-HH:MM:SS" from a day, else "HH:MM:SS".
[[nodiscard]] std::string format_slurm_time(long long seconds);

}  // namespace scalelab::cluster
