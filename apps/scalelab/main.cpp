// scalelab: the one command-line tool. `scalelab <subcommand> [options]`; `scalelab --help`
// lists the subcommands. Each subcommand lives in cmd_<name>.cpp and returns its exit code;
// errors are scalelab::Error exceptions, turned here into one line on stderr and exit 2 (usage,
// input) or 1 (runtime, comm). Under MPI a failing rank brings the job down (comm::fail_job).
#include <chrono>
#include <cstdio>
#include <exception>
#include <iostream>
#include <new>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "commands.h"
#include "flag_names.h"
#include "comm/mpi_runtime.h"
#include "core/error.h"
#include "core/launch_env.h"
#include "core/malloc_tuning.h"
#include "core/standard_output.h"
#include "data/jpeg_training_set.h"
#include "nn/blas.h"

namespace {

using scalelab::cli::Args;

struct Command {
  std::string_view name;
  int (*run)(const Args&);
  std::string_view summary;
};

constexpr Command kCommands[] = {
    {"info", scalelab::cli::cmd_info, "what was built in, versions, devices, and this rank's place in the job"},
    {"run", scalelab::cli::cmd_run, "launch N ranks of a scalelab command through mpirun (prints the command)"},
    {"bench", scalelab::cli::cmd_bench, "collective benchmark, nccl-tests style (allreduce, broadcast, ...)"},
    {"plot", scalelab::cli::cmd_plot, "charts (SVG and PNG, with gnuplot) from scalelab JSON records"},
    {"train", scalelab::cli::cmd_train, "data-parallel training on CPU ranks, Horovod-style (Keras progress, images/sec)"},
    {"scale", scalelab::cli::cmd_scale, "the same training at several rank counts: speed-up and scaling efficiency"},
    {"converge", scalelab::cli::cmd_converge, "large-batch convergence: lr scaling, warm-up, LARS, LAMB side by side"},
    {"topo", scalelab::cli::cmd_topo, "a machine's topology: link matrix, routes with bandwidth and latency, best ring"},
    {"predict", scalelab::cli::cmd_predict, "predicted collective time and bandwidth on a machine (cost model)"},
    {"simulate", scalelab::cli::cmd_simulate, "predicted training throughput, scaling efficiency and bottleneck (step model)"},
    {"calibrate", scalelab::cli::cmd_calibrate, "measure this machine (2 ranks) for the cost model's predictions"},
    {"bandwidth", scalelab::cli::cmd_bandwidth, "GPU copy bandwidth against size: host-device pinned and pageable, device (bandwidthTest)"},
    {"timeline", scalelab::cli::cmd_timeline, "where a step's time went, per rank, from a train or simulate timeline"},
    {"slurm", scalelab::cli::cmd_slurm, "an sbatch script for a scalelab command on Puhti, Mahti, LUMI-G, a DGX cluster or any Slurm"},
    {"grade", scalelab::cli::cmd_grade, "grade a submission of the assessment: build, run at 1-3 ranks under limits, Gradescope's results.json"},
    {"monitor", scalelab::cli::cmd_monitor, "sample GPU utilization and memory to CSV (nvidia-smi -l style, NVML), NVLink traffic"},
    {"data", scalelab::cli::cmd_data, "make a packed JPEG data set from Fashion-MNIST (make-jpeg)"},
    {"pipeline", scalelab::cli::cmd_pipeline, "the JPEG input pipeline alone: images/s per workers, augmentation and IDCT"},
};

}  // namespace

bool scalelab::cli::is_scalelab_command(std::string_view name) {
  for (const auto& c : kCommands) {
    if (c.name == name) return true;
  }
  return false;
}

namespace {

void print_help() {
  std::cout << "scalelab " << SCALELAB_VERSION
            << ": teach, predict and measure data-parallel training\n\n"
               "usage: scalelab <command> [options]     (scalelab <command> --help for its options)\n\n"
               "commands:\n";
  for (const auto& c : kCommands) {
    std::printf("  %-10s %s\n", std::string(c.name).c_str(), std::string(c.summary).c_str());
  }
}

// One write for the whole line: under mpirun several ranks print at once, and a line written in
// pieces can be cut by another rank's output (or by Open MPI's abort banner).
void print_error_line(const std::string& line) {
  const std::string text = line + "\n";
  std::fwrite(text.data(), 1, text.size(), stderr);
  std::fflush(stderr);
}

// Under an MPI launcher (mpirun, srun, PMI) every rank gets the same command line, so a mistake in
// it (a usage error before MPI is up) is the same on every rank: rank 0 says it and the others
// exit with the same status in silence, so the line appears once and not once per rank. They wait
// first: the launcher ends the job as soon as rank 0 exits with its error (at once, in practice),
// and rank 0's line must be out before a silent rank's exit could end it. A rank still running
// when the wait is over was not ended by rank 0's failure (its command line or its host differs:
// an MPMD launch, a core count that allows on one host what it refuses on another), so it says
// its error itself, naming its rank. Errors once MPI is up, and those about files, devices or the
// machine (which may differ between hosts), every rank prints; so does a process whose
// environment merely names a rank (torchrun's RANK).
bool left_to_rank_zero(const scalelab::Error& e) {
  if (e.kind() != scalelab::ErrorKind::usage || scalelab::comm::mpi_active()) return false;
  const scalelab::LaunchEnv env = scalelab::read_launch_env();
  const bool mpi_launcher = env.launcher == "mpirun" || env.launcher == "srun" || env.launcher == "pmi";
  return mpi_launcher && env.size > 1 && env.rank != 0;
}

}  // namespace

int main(int argc, char** argv) {
  // With standard output closed, the first file the command opens would become descriptor 1 and
  // receive what it prints.
  if (!scalelab::standard_output_open()) {
    print_error_line("error: scalelab: standard output is closed; run it with an open standard output (> /dev/null to discard it)");
    return 2;
  }
  scalelab::keep_large_allocations();
  scalelab::data::register_jpeg_datasets();  // --dataset jpeg:DIR (libjpeg-turbo lives above lib/data)
  // What was printed (the help, the version, a command's output) must have reached standard
  // output: a full disk or a closed pipe is not a success. `who` is "scalelab" or "scalelab CMD".
  const auto delivered = [](int code, const std::string& who) {
    if (const std::string why = code == 0 ? scalelab::standard_output_error() : ""; !why.empty()) {
      print_error_line("error: " + who + ": its output could not be written to standard output (" + why +
                       "); check the disk or the pipe it goes to");
      return 1;
    }
    return code;
  };
  if (argc < 2 || std::string_view(argv[1]) == "--help" || std::string_view(argv[1]) == "-h") {
    print_help();
    return delivered(argc < 2 ? 2 : 0, "scalelab");
  }
  if (std::string_view(argv[1]) == "--version") {
    std::cout << "scalelab " << SCALELAB_VERSION << "\n";
    return delivered(0, "scalelab");
  }
  Args args;
  args.name = argv[1];
  args.argv.assign(argv + 2, argv + argc);
  args.full.assign(argv, argv + argc);
  const Command* command = nullptr;
  for (const auto& c : kCommands) {
    if (c.name == args.name) command = &c;
  }
  if (command == nullptr) {
    std::cerr << "scalelab: unknown command '" << args.name << "'; run 'scalelab --help' for the list\n";
    return 2;
  }
  int code = 0;
  try {
    // A SCALELAB_BLAS* variable that asks for the impossible; `run` computes nothing (its ranks check).
    if (args.name != "run") scalelab::nn::check_blas_environment();
    code = command->run(args);
  } catch (const scalelab::Error& e) {
    if (left_to_rank_zero(e)) {
      std::this_thread::sleep_for(std::chrono::seconds(10));
      print_error_line("error: rank " + std::to_string(scalelab::read_launch_env().rank) + ": " +
                       scalelab::cli::cli_message(e, args.name));
    } else {
      print_error_line("error: " + scalelab::cli::cli_message(e, args.name));
    }
    code = e.exit_code();
  } catch (const std::bad_alloc&) {
    print_error_line("error: scalelab " + args.name +
                     ": out of memory: the sizes or counts given need more memory than this machine could allocate; give smaller ones");
    code = 1;
  } catch (const std::exception& e) {
    print_error_line("error: scalelab " + args.name + ": " + e.what());
    code = 1;
  }
  code = delivered(code, "scalelab " + args.name);
  if (code != 0) {
    scalelab::comm::fail_job(code);
  } else {
    scalelab::comm::finalize_mpi();
  }
  return code;
}
