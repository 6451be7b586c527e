// `scalelab slurm`: an sbatch script for a scalelab command on a cluster (lib/cluster).
#include <algorithm>
#include <cstdio>
#include <fstream>

#include "cluster/slurm_script.h"
#include "cluster/slurm_site.h"
#include "commands.h"
#include "core/atomic_file.h"
#include "core/error.h"

namespace scalelab::cli {

namespace {

std::string usage() {
  std::string clusters;
  for (const auto& c : cluster::slurm_cluster_names()) clusters += (clusters.empty() ? "" : "|") + c;
  return "scalelab slurm --cluster " + clusters +
         " --nodes N [--gpus-per-node G] [--time HH:MM:SS] [--account A] [--container IMAGE] [--out FILE] [--dry-run] -- <scalelab command...>\n\n"
         "Writes an sbatch script that runs a scalelab command with one rank per GPU, following the cluster's\n"
         "published conventions (partition by size and time, GPU request, cores and memory per GPU, srun's\n"
         "MPI plugin, CPU binding, device selection, Pyxis containers); each directive says why.\n"
         "The clusters' partitions and limits live in the machine catalog (scalelab topo --list), cited in\n"
         "docs/clusters.md. generic: any Slurm, GPUs per node as given (0: CPU ranks), srun --mpi=pmix.\n\n"
         "examples:\n"
         "  scalelab slurm --cluster puhti --nodes 2 --time 01:00:00 --account project_2001234 -- train --model resnet --epochs 5\n"
         "  scalelab slurm --cluster dgx --nodes 4 --container nvcr.io/nvidia/pytorch:24.05-py3 --dry-run -- bench allreduce -e 1G\n"
         "  scalelab slurm --cluster generic --nodes 1 --gpus-per-node 0 --ranks-per-node 2 --out job.sh -- train --max-steps 20";
}

}  // namespace

int cmd_slurm(const Args& args) {
  // Everything after "--" is the command the job runs; the options come before it.
  Args own = args;
  std::vector<std::string> command;
  for (std::size_t i = 0; i < args.argv.size(); ++i) {
    if (args.argv[i] == "--") {
      own.argv.assign(args.argv.begin(), args.argv.begin() + static_cast<std::ptrdiff_t>(i));
      command.assign(args.argv.begin() + static_cast<std::ptrdiff_t>(i) + 1, args.argv.end());
      break;
    }
  }
  po::options_description opts("scalelab slurm options");
  opts.add_options()
      ("cluster", po::value<std::string>(), "puhti, mahti, lumi-g, dgx or generic")
      ("nodes", po::value<int>()->default_value(1), "nodes")
      ("gpus-per-node", po::value<int>(), "GPUs per node (default: all of a node's; generic: none)")
      ("ranks-per-node", po::value<int>(), "ranks per node (default: one per GPU; must equal the GPUs when there are any)")
      ("time", po::value<std::string>()->default_value("00:15:00"), "wall-time limit, HH:MM:SS or D-HH:MM:SS")
      ("account", po::value<std::string>(), "the project billed (required on puhti, mahti and lumi-g)")
      ("container", po::value<std::string>(), "container image run by Pyxis (dgx, generic)")
      ("partition", po::value<std::string>(), "dgx and generic: the partition to name (elsewhere it is chosen)")
      ("job-name", po::value<std::string>()->default_value("scalelab"), "the job's name")
      ("out", po::value<std::string>(), "write the script to this file (default: print it)")
      ("dry-run", po::bool_switch(), "print the script, write nothing");
  const auto vm = parse(own, usage(), opts);
  if (!vm) return 0;
  if (!vm->count("cluster")) usage_error(args, "give --cluster (puhti, mahti, lumi-g, dgx or generic)");
  if (command.empty()) usage_error(args, "give the scalelab command the job runs after --, e.g. -- train --model resnet");
  if (!is_scalelab_command(command.front())) {
    usage_error(args, "'" + command.front() + "' after -- is not a scalelab command; give one of scalelab's (train, bench, scale ...)");
  }
  if (command.front() == "run" || command.front() == "slurm") {
    usage_error(args, "the job runs its ranks through srun; give the command itself after --, not '" + command.front() + "'");
  }
  const bool asks_help = std::find_if(command.begin(), command.end(), [](const std::string& w) {
                           return w == "--help" || w == "-h";
                         }) != command.end();
  if (command.front() == "train" && !asks_help) {
    // The job's own options, checked now rather than when the job starts, hours later.
    Args job;
    job.name = "train";
    job.argv.assign(command.begin() + 1, command.end());
    job.full = command;
    check_train_args(job);
  }
  check_output_files(*vm, {"out"});

  const cluster::SlurmSite site = cluster::load_slurm_site((*vm)["cluster"].as<std::string>());
  cluster::JobRequest r;
  r.nodes = (*vm)["nodes"].as<int>();
  if (vm->count("gpus-per-node")) {
    r.gpus_per_node = (*vm)["gpus-per-node"].as<int>();
    if (r.gpus_per_node < 0) usage_error(args, "--gpus-per-node " + std::to_string(r.gpus_per_node) + ": give 0 or more");
  } else if (site.machine.empty()) {
    r.gpus_per_node = 0;
  }
  if (r.gpus_per_node == 0) {
    // A job that computes or communicates on GPUs, in an allocation that has none, fails once it starts.
    for (std::size_t i = 1; i < command.size(); ++i) {
      const std::string& w = command[i];
      const std::string next = i + 1 < command.size() ? command[i + 1] : "";
      const bool cuda = w == "--device=cuda" || (w == "--device" && next == "cuda");
      const bool nccl = w == "--backend=nccl" || (w == "--backend" && next == "nccl");
      if (cuda || nccl) {
        usage_error(args, std::string(cuda ? "--device cuda" : "--backend nccl") +
                              " in the job needs GPUs, and the job asks for none; give --gpus-per-node G (G >= 1)");
      }
    }
  }
  if (vm->count("ranks-per-node")) r.ranks_per_node = (*vm)["ranks-per-node"].as<int>();
  r.time_seconds = cluster::parse_slurm_time((*vm)["time"].as<std::string>(), "time");
  // Given but empty (an unset $IMAGE): the script would silently lack what was asked for.
  for (const char* name : {"account", "container", "partition"}) {
    if (vm->count(name) && (*vm)[name].as<std::string>().empty()) {
      usage_error(args, std::string("--") + name + " is empty; give a value or leave the flag out");
    }
  }
  if (vm->count("account")) r.account = (*vm)["account"].as<std::string>();
  if (vm->count("container")) r.container = (*vm)["container"].as<std::string>();
  if (vm->count("partition")) r.partition = (*vm)["partition"].as<std::string>();
  r.job_name = (*vm)["job-name"].as<std::string>();
  r.command = command;
  r.written_by = args.full;
  const cluster::JobScript script = cluster::write_slurm_script(site, r);

  if ((*vm)["dry-run"].as<bool>() || !vm->count("out")) {
    std::fputs(script.text.c_str(), stdout);
    return 0;
  }
  const std::string out = (*vm)["out"].as<std::string>();
  write_file_atomically(out, script.text, "out");
  std::fprintf(stderr, "scalelab slurm: wrote %s (%s, %d rank%s%s); submit it with: sbatch %s\n", out.c_str(), site.cluster.c_str(),
               script.ranks, script.ranks == 1 ? "" : "s", script.partition.empty() ? "" : (", partition " + script.partition).c_str(),
               out.c_str());
  return 0;
}

}  // namespace scalelab::cli
