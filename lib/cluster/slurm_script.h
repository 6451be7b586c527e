// An sbatch script for a scalelab command on a Slurm cluster, following the site's conventions
// (lib/cluster/slurm_site.h): the partition chosen by size and time, the GPU request in the site's
// form, cores and memory in proportion to the GPUs, srun with the site's MPI plugin, CPU binding
// and per-rank device selection where the site asks for them, Pyxis container flags; each
// directive with a comment saying why. docs/clusters.md cites each convention.
//
//   JobRequest r;  r.cluster = "puhti";  r.nodes = 2;  r.time_seconds = 900;
//   r.account = "project_2001234";  r.command = {"train", "--model", "resnet"};
//   const JobScript s = write_slurm_script(load_slurm_site("puhti"), r);  // s.partition == "gputest"
#pragma once
#include <string>
#include <vector>

#include "cluster/slurm_site.h"

namespace scalelab::cluster {

struct JobRequest {
  int nodes = 1;
  int gpus_per_node = -1;      // -1: every GPU of a node (generic: none)
  int ranks_per_node = -1;     // -1: one per GPU (one when there are no GPUs)
  long long time_seconds = 15 * 60;
  std::string account;         // billing project; required where the site bills one
  std::string container;       // Pyxis image (sites with containers only)
  std::string partition;       // sites that name none (dgx, generic): the partition to name, "" none
  std::string job_name = "scalelab";
  std::vector<std::string> command;  // the scalelab subcommand and its arguments
  std::vector<std::string> written_by;  // the command line that asked for the script (a comment)
};

struct JobScript {
  std::string text;
  std::string partition;  // "" when none is named
  int ranks = 0;          // in all
};

// Input errors name the flag and the limit: more GPUs per node than the cluster has, a time or a
// node count no partition takes, an account missing where the site needs one, a container on a
// site without Pyxis, ranks per node that do not match the GPUs.
[[nodiscard]] JobScript write_slurm_script(const SlurmSite& site, const JobRequest& request);

// `word` quoted for a POSIX shell when it needs it (spaces, $, quotes...).
[[nodiscard]] std::string shell_quote(const std::string& word);

}  // namespace scalelab::cluster
