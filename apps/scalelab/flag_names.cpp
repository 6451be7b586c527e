// The table of flag_names.h: library parameter -> CLI flag. Keep rows sorted by parameter.
// Parameters are the library's field names: train::TrainConfig (batch_size, lr, bucket_cap_bytes
// ...), optim::OptimizerOptions (momentum, weight_decay, trust_coefficient), optim::ScheduleConfig
// (base_lr, reference_batch, warmup_epochs, step_epochs, decay ...), bench::BenchOptions and its
// sweep (min_bytes, iters, types ...), monitor::NodeMonitorOptions (csv_path, interval_s), and the
// names of the inputs the library reads or writes (dataset, machine, gpus, json, timeline, resume).
// "device" is TrainConfig's (cpu or cuda); a GPU's index, as the bandwidth test takes it, is
// "cuda_device".
#include "flag_names.h"

#include <utility>

namespace scalelab::cli {
namespace {

constexpr std::pair<std::string_view, std::string_view> kFlags[] = {
    {"account", "--account"},
    {"algo", "--algo"},
    {"algorithm", "--algo"},
    {"augment", "--augment"},
    {"backend", "--backend"},
    {"backward_passes_per_step", "--backward-passes-per-step"},
    {"base_lr", "--lr"},
    {"batch_size", "--batch-size"},
    {"bucket_cap_bytes", "--bucket-cap"},
    {"chart", "--chart"},
    {"charts", "--charts"},
    {"check", "-c/--check"},
    {"checkpoint", "--checkpoint"},
    {"cluster", "--cluster"},
    {"command", "the command after --"},
    {"compare", "--compare"},
    {"container", "--container"},
    {"csv_path", "--gpu-monitor"},
    {"crop", "--crop"},
    {"cuda_device", "--cuda-device"},
    {"cuda_graphs", "--cuda-graphs"},
    {"precision", "--precision"},
    {"overlap", "--overlap"},
    {"data_dir", "--data-dir"},
    {"dataset", "--dataset"},
    {"decay", "--lr-schedule"},
    {"decode", "--decode"},
    {"decode_rate", "--decode-rate"},
    {"device", "--device"},
    {"epochs", "--epochs"},
    {"evaluate", "evaluation (--no-eval)"},
    {"fp16_allreduce", "--fp16-allreduce"},
    {"gpus", "--gpus"},
    {"gpus_per_node", "--gpus-per-node"},
    {"interval_s", "--gpu-monitor-interval"},
    {"iters", "-n/--iters"},
    {"job_name", "--job-name"},
    {"jpeg_quality", "--quality"},
    {"jpeg_size", "--size"},
    {"json", "--json"},
    {"loader_workers", "--loader-workers"},
    {"lr", "--lr"},
    {"machine", "--machine"},
    {"max_bytes", "-e/--maxbytes"},
    {"max_steps", "--max-steps"},
    {"min_bytes", "-b/--minbytes"},
    {"model", "--model"},
    {"momentum", "--momentum"},
    {"nodes", "--nodes"},
    {"on_bad_sample", "--on-bad-sample"},
    {"ops", "-o/--op"},
    {"optimizer", "--optimizer"},
    {"out", "--out"},
    {"output", "--output"},
    {"package", "--package"},
    {"partition", "--partition"},
    {"poly_power", "--lr-power"},
    {"precision", "--precision"},
    {"prefetch", "--prefetch"},
    {"profile", "--profile"},
    {"progress_interval_s", "--progress-interval"},
    {"ranks_per_node", "--ranks-per-node"},
    {"reference_batch", "--base-batch"},
    {"repeats", "--repeats"},
    {"resume", "--resume"},
    {"root", "-r/--root"},
    {"scaling", "--lr-scaling"},
    {"seed", "--seed"},
    {"shared_buffers", "-R/--register"},
    {"sizes", "-b/-e/-f"},
    {"stall_timeout_s", "--stall-timeout"},
    {"step_bytes", "-i/--stepbytes"},
    {"step_epochs", "--lr-steps"},
    {"step_factor", "-f/--stepfactor"},
    {"step_gamma", "--lr-gamma"},
    {"sync_batchnorm", "--sync-batchnorm"},
    {"threads", "--threads"},
    {"throughput_skip", "--throughput-skip"},
    {"time", "--time"},
    {"timeline", "--timeline"},
    {"trust_coefficient", "--lars-eta"},
    {"types", "-d/--datatype"},
    {"warmup", "--warmup"},
    {"warmup_epochs", "--warmup-epochs"},
    {"warmup_iters", "-w/--warmup_iters"},
    {"weight_decay", "--weight-decay"},
    {"workload", "--workload"},
};

// Commands whose options set a parameter under another flag than the table's: converge sets a
// step's batch with --micro-batch and its backward passes with --scale (through the emulated
// workers), and has no --batch-size; data make-jpeg's source is --from. grade names its own options.
struct CommandFlag {
  std::string_view command, parameter, flag;
};
constexpr CommandFlag kCommandFlags[] = {
    {"converge", "backward_passes_per_step", "--scale"},
    {"converge", "batch_size", "--micro-batch/--base-batch"},
    // data make-jpeg reads its source data set from --from.
    {"data", "dataset", "--from"},
    // grade's options (lib/grade/grader.h's GradeOptions).
    {"grade", "batch", "--batch"},
    {"grade", "disk_limit", "--disk-limit"},
    {"grade", "memory_limit", "--memory-limit"},
    {"grade", "prefix", "--prefix"},
    {"grade", "ranks", "--ranks"},
    {"grade", "submission", "SUBMISSION_DIR"},
    {"grade", "target", "--target"},
    {"grade", "time_limit", "--time-limit"},
};

}  // namespace

std::string flag_for(std::string_view parameter, std::string_view command) {
  for (const auto& row : kCommandFlags) {
    if (row.command == command && row.parameter == parameter) return std::string(row.flag);
  }
  return flag_for(parameter);
}

std::string flag_for(std::string_view parameter) {
  for (const auto& [name, flag] : kFlags) {
    if (name == parameter) return std::string(flag);
  }
  return "";
}

std::string cli_message(const Error& e, std::string_view command) {
  return e.message_with([command](const std::string& parameter) {
    const std::string flag = flag_for(parameter, command);
    return flag.empty() ? parameter : flag;
  });
}

}  // namespace scalelab::cli
