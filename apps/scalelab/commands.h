// Every subcommand of `scalelab`, one function each, one file each (cmd_<name>.cpp).
// main.cpp holds the table that maps names to these functions.
#pragma once
#include "cli.h"

namespace scalelab::model {
struct GpuCopies;  // model/profile.h
}  // namespace scalelab::model

namespace scalelab::cli {

int cmd_info(const Args& args);       // backends, versions, devices, rank/size from the launcher
int cmd_run(const Args& args);        // horovodrun-style launcher: builds and runs mpirun
int cmd_bench(const Args& args);      // nccl-tests-style collective benchmark
int cmd_plot(const Args& args);       // charts from JSON records (gnuplot)
int cmd_train(const Args& args);      // data-parallel training, Horovod-style (lib/train)
// Reads and checks train's options as cmd_train does, and returns; a usage error names a bad one
// (`scalelab slurm -- train ...` checks before it writes a script that would fail once queued).
void check_train_args(const Args& args);
int cmd_scale(const Args& args);      // the same training at several rank counts: scaling table and chart
int cmd_converge(const Args& args);   // large-batch convergence configurations side by side
int cmd_topo(const Args& args);       // machine topology: nvidia-smi-style matrix, routes, best ring
int cmd_predict(const Args& args);    // cost-model predictions of collectives, nccl-tests columns
int cmd_simulate(const Args& args);   // a workload's training step on a machine: throughput, scaling, bottleneck
int cmd_calibrate(const Args& args);  // measure this machine for the cost model (2 ranks)
int cmd_bandwidth(const Args& args);  // GPU copy bandwidth against size, bandwidthTest style (CUDA builds)
// The bandwidth test's figures `calibrate` saves in the profile, or why there are none
// (cmd_bandwidth.cpp; cmd_bandwidth_none.cpp in builds without CUDA).
model::GpuCopies gpu_copies_for_profile(bool quick);
int cmd_timeline(const Args& args);   // where a step's time went, from a Chrome trace timeline
int cmd_slurm(const Args& args);      // an sbatch script for a scalelab command on a cluster (lib/cluster)
// Whether `name` is one of scalelab's subcommands (main.cpp's table).
[[nodiscard]] bool is_scalelab_command(std::string_view name);
int cmd_grade(const Args& args);      // the assessment's autograder: Gradescope's results.json (lib/grade)
int cmd_monitor(const Args& args);    // GPU sampling to nvidia-smi-shaped CSV through NVML, NVLink traffic

int cmd_data(const Args& args);       // data sets: make-jpeg, a packed JPEG set from Fashion-MNIST (lib/data)
int cmd_pipeline(const Args& args);   // the JPEG input pipeline alone: images/s per workers, augmentation, IDCT

}  // namespace scalelab::cli
