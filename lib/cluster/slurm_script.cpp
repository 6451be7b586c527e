// sbatch scripts (see slurm_script.h).
#include "cluster/slurm_script.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <string>
#include <utility>

#include "core/error.h"

namespace scalelab::cluster {

namespace {

// "#SBATCH --nodes=2" padded so the comments line up.
std::string directive(const std::string& flag, const std::string& why) {
  std::string line = "#SBATCH " + flag;
  if (line.size() < 40) line.append(40 - line.size(), ' ');
  return line + " # " + why + "\n";
}

std::string describe(const SlurmPartition& p, int gpus_per_node) {
  const int gpus = p.max_gpus > 0 ? p.max_gpus : p.max_nodes * gpus_per_node;
  return p.name + ": " + std::to_string(p.max_nodes) + " node" + (p.max_nodes == 1 ? "" : "s") +
         (gpus > 0 ? ", " + std::to_string(gpus) + " GPUs" : "") + ", " + format_slurm_time(p.max_seconds);
}

const SlurmPartition& choose_partition(const SlurmSite& site, const JobRequest& r, int gpus_per_node) {
  for (const auto& p : site.partitions) {
    const bool gpus_fit = p.max_gpus == 0 || r.nodes * gpus_per_node <= p.max_gpus;
    if (r.nodes <= p.max_nodes && gpus_fit && r.time_seconds <= p.max_seconds) return p;
  }
  std::string limits;
  for (const auto& p : site.partitions) limits += (limits.empty() ? "" : "; ") + describe(p, site.gpus_per_node);
  throw_parameter(ErrorKind::usage, "nodes",
                  std::to_string(r.nodes) + " for time " + format_slurm_time(r.time_seconds) + ": no " + site.cluster +
                      " partition takes " + std::to_string(r.nodes) + " node(s) x " + std::to_string(gpus_per_node) +
                      " GPUs for that long (" + limits + "); ask for fewer nodes or less time");
}

}  // namespace

std::string shell_quote(const std::string& w) {
  const bool plain = !w.empty() && std::all_of(w.begin(), w.end(), [](unsigned char c) {
    return std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '/' || c == ',' || c == ':' || c == '=' || c == '+' || c == '@';
  });
  if (plain) return w;
  std::string out = "'";
  for (char c : w) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

JobScript write_slurm_script(const SlurmSite& site, const JobRequest& r) {
  // Beyond the largest machines in service (some 10,000 nodes), a typo rather than a request.
  constexpr int kMaxNodes = 100'000;
  if (r.nodes < 1 || r.nodes > kMaxNodes) {
    throw_parameter(ErrorKind::usage, "nodes",
                    std::to_string(r.nodes) + ": give from 1 to " + std::to_string(kMaxNodes) + " nodes");
  }
  if (r.command.empty()) throw_parameter(ErrorKind::usage, "command", ": empty; give the scalelab command the job runs");
  const bool generic = site.machine.empty();
  int gpus = r.gpus_per_node >= 0 ? r.gpus_per_node : site.gpus_per_node;
  if (!generic && (gpus < 1 || gpus > site.gpus_per_node)) {
    throw_parameter(ErrorKind::usage, "gpus_per_node",
                    std::to_string(gpus) + ": a " + site.cluster + " node has " + std::to_string(site.gpus_per_node) +
                        " GPUs; give 1 to " + std::to_string(site.gpus_per_node));
  }
  if (generic && gpus > 512) {
    throw_parameter(ErrorKind::usage, "gpus_per_node", std::to_string(gpus) + ": give at most 512 GPUs per node");
  }
  const int ranks = r.ranks_per_node >= 0 ? r.ranks_per_node : std::max(gpus, 1);
  if (ranks < 1 || ranks > 4096) throw_parameter(ErrorKind::usage, "ranks_per_node", std::to_string(ranks) + ": give 1 to 4096 ranks per node");
  if (gpus > 0 && ranks != gpus) {
    throw_parameter(ErrorKind::usage, "ranks_per_node",
                    std::to_string(ranks) + " ranks per node for " + std::to_string(gpus) +
                        " GPUs per node: scalelab runs one rank per GPU; give the same number, or leave it unset");
  }
  // Written into #SBATCH lines (and the output file's name), which sbatch splits at spaces and a
  // shell would expand: names of letters, digits and . _ + - only, as Slurm's own names are.
  for (const auto& [parameter, value] : {std::pair<const char*, const std::string&>{"job_name", r.job_name},
                                         {"account", r.account}, {"partition", r.partition}}) {
    const auto bad = std::find_if(value.begin(), value.end(), [](char ch) {
      return !(std::isalnum(static_cast<unsigned char>(ch)) || ch == '.' || ch == '_' || ch == '+' || ch == '-');
    });
    if (bad != value.end()) {
      throw_parameter(ErrorKind::usage, parameter,
                      "'" + value + "': a Slurm name holds letters, digits and . _ + - only (found '" + std::string(1, *bad) +
                          "'); choose another");
    }
  }
  if (r.job_name.empty()) throw_parameter(ErrorKind::usage, "job_name", "is empty; give the job a name");
  if (site.account_required && r.account.empty()) {
    throw_parameter(ErrorKind::usage, "account", ": " + site.cluster + " bills every job to a project; give the project (e.g. project_2001234)");
  }
  if (!r.container.empty() && !site.containers) {
    throw_parameter(ErrorKind::usage, "container",
                    r.container + ": " + site.cluster + " has no Pyxis container plugin for srun; use the dgx or generic cluster, or no container");
  }
  if (!r.partition.empty() && !site.partitions.empty()) {
    throw_parameter(ErrorKind::usage, "partition", r.partition + ": " + site.cluster +
                                                       "'s partition is chosen from the size and the time; leave it unset");
  }

  JobScript out;
  out.ranks = ranks * r.nodes;
  std::string s = "#!/bin/bash\n";
  std::string asked;
  for (const auto& w : r.written_by) {
    if (!asked.empty()) asked += ' ';
    asked += shell_quote(w);
  }
  if (!asked.empty()) s += "# Written by: " + asked + "\n";
  s += "# Cluster: " + site.cluster + " (" + site.title + ")\n";
  for (const auto& src : site.sources) s += "# Source: " + src + "\n";
  s += "# Submit with: sbatch <this file>\n";
  s += directive("--job-name=" + r.job_name, "the name squeue and sacct show");
  if (!r.account.empty()) s += directive("--account=" + r.account, "the project the GPU hours are billed to");
  if (site.nodes > 0 && r.nodes > site.nodes) {
    throw_parameter(ErrorKind::usage, "nodes", std::to_string(r.nodes) + ": " + site.cluster + " has " + std::to_string(site.nodes) +
                                                   " GPU nodes; ask for at most that many");
  }
  if (!site.partitions.empty()) {
    const SlurmPartition& p = choose_partition(site, r, gpus);
    out.partition = p.name;
    s += directive("--partition=" + p.name, "the first that takes " + std::to_string(r.nodes) + " node(s) for this time (" +
                                                describe(p, site.gpus_per_node) + ")");
  } else if (!r.partition.empty()) {
    out.partition = r.partition;
    s += directive("--partition=" + r.partition, "the partition asked for");
  }
  s += directive("--time=" + format_slurm_time(r.time_seconds), "wall-time limit: the job is killed after it");
  s += directive("--nodes=" + std::to_string(r.nodes), "nodes");
  s += directive("--ntasks-per-node=" + std::to_string(ranks),
                 gpus > 0 ? "one rank per GPU (Horovod's rule: each rank drives one device)" : "CPU ranks per node");
  if (gpus > 0) {
    if (site.gpu_request == GpuRequest::gres) {
      s += directive("--gres=gpu:" + site.gres_name + ":" + std::to_string(gpus), "GPUs per node, by this cluster's gres name");
    } else {
      s += directive("--gpus-per-node=" + std::to_string(gpus), "GPUs per node");
    }
  }
  if (site.cores_per_gpu > 0 && gpus > 0) {
    s += directive("--cpus-per-task=" + std::to_string(site.cores_per_gpu),
                   "cores per rank: the site's share per GPU, for the data loader's threads");
  }
  if (site.memory_GiB_per_node > 0 && gpus > 0 && !site.whole_nodes) {
    const int mem = static_cast<int>(std::floor(static_cast<double>(site.memory_GiB_per_node) * gpus / site.gpus_per_node));
    s += directive("--mem=" + std::to_string(mem) + "G", "memory in proportion to the GPUs (" + std::to_string(site.memory_GiB_per_node) +
                                                             " GiB for all " + std::to_string(site.gpus_per_node) + ")");
  }
  s += directive("--output=" + r.job_name + "-%j.out", "stdout and stderr of every rank; %j is the job id");
  s += "\n";
  if (!site.modules.empty()) s += site.modules + "  # the site's software environment\n";
  s += "SCALELAB=${SCALELAB:-scalelab}  # the scalelab to run: on PATH, or set SCALELAB=/path/to/scalelab before sbatch\n";
  if (site.cores_per_gpu > 0 && gpus > 0) s += "export OMP_NUM_THREADS=${SLURM_CPUS_PER_TASK:-1}  # threads per rank = its cores\n";
  s += "\n";
  std::string srun = "srun";
  if (!site.srun_mpi.empty()) srun += " --mpi=" + site.srun_mpi;
  if (!site.cpu_bind.empty()) srun += " --cpu-bind=" + site.cpu_bind;
  if (!r.container.empty()) {
    srun += " --container-image=" + shell_quote(r.container) + " --container-mounts=\"$PWD:$PWD\" --container-workdir=\"$PWD\"";
  }
  std::string comment = "# one scalelab rank per task";
  if (!site.srun_mpi.empty()) comment += "; --mpi=" + site.srun_mpi + ": the process-management interface Open MPI reads";
  if (!site.cpu_bind.empty()) comment += "; --cpu-bind: each rank on the cores nearest its GPU";
  if (!r.container.empty()) comment += "; Pyxis runs it in the image, with this folder mounted";
  s += comment + "\n";
  std::string cmd = "\"$SCALELAB\"";
  for (const auto& w : r.command) {
    cmd += ' ';
    cmd += shell_quote(w);
  }
  if (!site.device_variable.empty()) {
    s += "# each rank sees only its own GPU: " + site.device_variable + " = its rank on the node\n";
    cmd = "bash -c '" + site.device_variable + "=$SLURM_LOCALID exec \"$@\"' scalelab " + cmd;
  }
  s += srun + " " + cmd + "\n";
  out.text = s;
  return out;
}

}  // namespace scalelab::cluster
