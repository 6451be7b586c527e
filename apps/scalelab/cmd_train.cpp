// `scalelab train [options]`: data-parallel training on CPU ranks, Horovod-style. Runs alone or
// under `scalelab run -np N -- train ...` / `mpirun -np N scalelab train ...`. Options are checked
// before MPI starts (a typo is one line, exit 2); then lib/train's Trainer runs on every rank and
// rank 0 prints Keras-style progress lines and writes --json after every epoch. --device picks the
// engine (lib/train/engine.h): CPU cores, or the GPU of each rank's local rank.
// The lr schedule flags are those of `scalelab converge` (--lr-schedule, --lr-scaling with
// --base-batch, --warmup, --warmup-epochs, --lr-steps/--lr-gamma/--lr-power) and build one
// optim::LrSchedule (lib/optim/schedule.h); --sync-batchnorm installs lib/train's SyncBatchNorm.
#include <algorithm>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "collectives/algorithm.h"
#include "comm/factory.h"
#include "commands.h"
#include "core/error.h"
#include "core/results.h"
#include "core/size_parse.h"
#include "core/text.h"
#include "data/load.h"
#include "monitor/node_monitor.h"
#include "nn/model.h"
#include "optim/factory.h"
#include "optim/schedule.h"
#include "train/sync_batchnorm.h"
#include "train/trainer.h"

namespace scalelab::cli {
namespace {

constexpr const char* kUsage =
    "scalelab train [options]\n\n"
    "Trains a model data-parallel, as Horovod does: every rank builds the same model, rank 0's\n"
    "parameters are broadcast, each rank trains on its shard of the data (DistributedSampler\n"
    "semantics: padded to equal shards, last partial batch dropped) and gradients are averaged by\n"
    "allreduce every step. --batch-size is per rank: the global batch is batch x ranks x\n"
    "backward passes. images/sec counts all ranks and leaves out the first --throughput-skip\n"
    "steps of each epoch. Launch several ranks with `scalelab run -np N -- train ...` or mpirun.\n\n"
    "examples:\n"
    "  scalelab train --model cnn --epochs 1\n"
    "  scalelab run -np 2 -- train --model cnn --epochs 1 --json train.json --timeline timeline.json\n"
    "  scalelab train --dataset synthetic --model trivial --max-steps 50\n"
    "  scalelab run -np 2 -- train --device cuda --model cnn --epochs 1   (one GPU per rank)\n"
    "  scalelab run -np 2 -- train --optimizer sgd --lr 0.01 --lr-scaling linear --base-batch 128 \\\n"
    "      --warmup-epochs 1 --lr-schedule cosine --epochs 3";

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

template <typename T>
T non_negative(const po::variables_map& vm, const char* name) {
  const long long v = vm[name].as<long long>();
  if (v < 0) throw_usage(std::string("--") + name + " " + std::to_string(v) + ": must not be negative");
  return static_cast<T>(v);
}

// The 1-minute load average, recorded beside every timing (a busy machine slows everything).
double load_average() {
  std::ifstream in("/proc/loadavg");
  double l = -1;
  in >> l;
  return l;
}

struct Parsed {
  train::TrainConfig config;
  optim::ScheduleConfig schedule;  // global_batch, workers and steps_per_epoch set once known
  bool sync_batchnorm = false;
  std::string json;
  std::string backend;
  monitor::NodeMonitorOptions gpu_monitor;  // --gpu-monitor: this node's GPUs sampled while training
};

// The schedule flags, read as `scalelab converge` reads them. Without --warmup, a positive
// --warmup-epochs means a gradual warm-up; with it, --warmup-epochs must be positive.
optim::ScheduleConfig parse_schedule(const po::variables_map& vm, const Args& args, const train::TrainConfig& c) {
  optim::ScheduleConfig s;
  s.base_lr = c.lr;
  s.scaling = optim::parse_scaling_rule(vm["lr-scaling"].as<std::string>(), "--lr-scaling");
  const long long reference = vm["base-batch"].as<long long>();
  if (reference < 1) usage_error(args, "--base-batch " + std::to_string(reference) + ": the reference batch must be at least 1");
  s.reference_batch = static_cast<int>(reference);
  s.warmup_epochs = vm["warmup-epochs"].as<double>();
  if (vm["warmup"].defaulted()) {
    s.warmup = s.warmup_epochs > 0 ? optim::WarmupKind::gradual : optim::WarmupKind::none;
  } else {
    s.warmup = optim::parse_warmup_kind(vm["warmup"].as<std::string>(), "--warmup");
  }
  s.decay = optim::parse_decay_kind(vm["lr-schedule"].as<std::string>(), "--lr-schedule");
  for (const auto& m : split_list(vm["lr-steps"].as<std::string>())) {
    if (m.empty()) continue;
    try {
      s.step_epochs.push_back(std::stod(m));
    } catch (const std::exception&) {
      usage_error(args, "--lr-steps " + m + ": not a number of epochs; give milestones like 3,4");
    }
  }
  s.step_gamma = vm["lr-gamma"].as<double>();
  s.poly_power = vm["lr-power"].as<double>();
  s.epochs = c.epochs;
  // One rank and one step per epoch until MPI and the data are up; enough to check every flag.
  s.global_batch = static_cast<int>(c.batch_size * static_cast<std::size_t>(c.backward_passes_per_step));
  s.workers = 1;
  s.steps_per_epoch = 1;
  return s;
}

bool plain_constant(const optim::ScheduleConfig& s) {
  return s.scaling == optim::ScalingRule::none && s.warmup == optim::WarmupKind::none &&
         s.decay == optim::DecayKind::constant;
}

std::optional<Parsed> parse_train(const Args& args) {
  po::options_description o("options");
  o.add_options()
      ("model", po::value<std::string>()->default_value("cnn"), ("model: " + join(nn::model_names())).c_str())
      ("dataset", po::value<std::string>()->default_value("fashion-mnist"),
       "fashion-mnist, synthetic, or a folder of MNIST-format IDX files")
      ("data-dir", po::value<std::string>()->default_value(""),
       "folder of the Fashion-MNIST IDX files (default $SCALELAB_DATA_DIR, else /usr/share/datasets/fashion-mnist)")
      ("epochs", po::value<int>()->default_value(1), "epochs to train (in total, when resuming)")
      ("batch-size", po::value<long long>()->default_value(128), "samples per rank per backward pass")
      ("lr", po::value<double>()->default_value(0.001), "learning rate (at --base-batch when --lr-scaling is set)")
      ("lr-schedule", po::value<std::string>()->default_value("constant"), "decay: constant, step, cosine, polynomial")
      ("lr-scaling", po::value<std::string>()->default_value("none"),
       "scale --lr by global batch / --base-batch: none, linear, sqrt")
      ("base-batch", po::value<long long>()->default_value(32), "global batch --lr was tuned at (the scaling rules' reference)")
      ("warmup", po::value<std::string>()->default_value("gradual"), "warm-up kind: gradual, constant, horovod, none")
      ("warmup-epochs", po::value<double>()->default_value(0.0), "warm-up length in epochs (may be fractional; 0: none)")
      ("lr-steps", po::value<std::string>()->default_value(""), "step decay milestones in epochs, e.g. 3,4")
      ("lr-gamma", po::value<double>()->default_value(0.1), "step decay factor")
      ("lr-power", po::value<double>()->default_value(2.0), "polynomial decay power")
      ("sync-batchnorm", po::bool_switch(), "allreduce BatchNorm statistics across ranks (SyncBatchNorm)")
      ("optimizer", po::value<std::string>()->default_value("adam"), ("optimizer: " + join(optim::optimizer_names())).c_str())
      ("momentum", po::value<float>()->default_value(0.9f, "0.9"), "momentum (sgd, lars)")
      ("weight-decay", po::value<float>()->default_value(0.0f), "L2 weight decay")
      ("threads", po::value<int>()->default_value(1), "compute threads per rank")
      ("device", po::value<std::string>()->default_value("cpu"),
       "where each rank computes: cpu, or cuda (the GPU of its local rank; needs a CUDA build)")
      ("max-steps", po::value<long long>()->default_value(0), "cap on steps per epoch (0: the whole shard)")
      ("seed", po::value<long long>()->default_value(42), "seed for initialisation, shuffling, dropout, synthetic data")
      ("checkpoint", po::value<std::string>()->default_value(""), "rank 0 writes a checkpoint here after every epoch (atomically)")
      ("resume", po::value<std::string>()->default_value(""), "continue from this checkpoint")
      ("timeline", po::value<std::string>()->default_value(""), "write a Chrome trace JSON timeline of every step (Perfetto)")
      ("json", po::value<std::string>()->default_value(""), "write per-epoch records here (rank 0, after every epoch)")
      ("algo", po::value<std::string>()->default_value("library"),
       ("allreduce algorithm for the gradients: " + join(collectives::algorithm_names(collectives::Collective::allreduce))).c_str())
      ("fusion-threshold", po::value<std::string>()->default_value("64M"),
       "bytes per fused allreduce (HOROVOD_FUSION_THRESHOLD); 0: one allreduce per tensor")
      ("fp16-allreduce", po::bool_switch(), "send gradients as float16 (Horovod's Compression.fp16)")
      ("backward-passes-per-step", po::value<int>()->default_value(1), "micro-batches accumulated locally per optimizer step")
      ("loader-workers", po::value<int>()->default_value(1), "data loader threads per rank")
      ("prefetch", po::value<int>()->default_value(2), "batches the loader prepares ahead")
      ("throughput-skip", po::value<long long>()->default_value(5), "steps left out of images/sec at the start of each epoch")
      ("no-eval", po::bool_switch(), "skip the test-set evaluation after each epoch")
      ("stall-timeout", po::value<double>()->default_value(300),
       "end a rank after this many seconds without a finished step (a peer stopped or died); 0: never")
      ("backend", po::value<std::string>()->default_value("mpi"), "communicator backend")
      ("quiet", po::bool_switch(), "no progress lines")
      ("gpu-monitor", po::value<std::string>()->default_value(""),
       "sample this node's GPUs to this CSV while training (nvidia-smi -l style, NVML; each node's local rank 0)")
      ("gpu-monitor-interval", po::value<double>()->default_value(5.0), "seconds between --gpu-monitor samples");
  auto vm = parse(args, kUsage, o);
  if (!vm) return std::nullopt;
  Parsed p;
  train::TrainConfig& c = p.config;
  c.model = (*vm)["model"].as<std::string>();
  c.dataset.name = (*vm)["dataset"].as<std::string>();
  c.dataset.data_dir = (*vm)["data-dir"].as<std::string>();
  c.epochs = (*vm)["epochs"].as<int>();
  c.batch_size = non_negative<std::size_t>(*vm, "batch-size");
  c.lr = (*vm)["lr"].as<double>();
  c.optimizer = (*vm)["optimizer"].as<std::string>();
  c.optimizer_options.momentum = (*vm)["momentum"].as<float>();
  c.optimizer_options.weight_decay = (*vm)["weight-decay"].as<float>();
  c.threads = (*vm)["threads"].as<int>();
  c.device = (*vm)["device"].as<std::string>();
  c.max_steps = non_negative<std::size_t>(*vm, "max-steps");
  c.seed = non_negative<std::uint64_t>(*vm, "seed");
  c.dataset.seed = c.seed;
  c.checkpoint = (*vm)["checkpoint"].as<std::string>();
  c.resume = (*vm)["resume"].as<std::string>();
  c.timeline = (*vm)["timeline"].as<std::string>();
  c.algo = (*vm)["algo"].as<std::string>();
  c.fusion_threshold = parse_size((*vm)["fusion-threshold"].as<std::string>(), "--fusion-threshold");
  c.fp16_allreduce = (*vm)["fp16-allreduce"].as<bool>();
  c.backward_passes_per_step = (*vm)["backward-passes-per-step"].as<int>();
  c.loader_workers = (*vm)["loader-workers"].as<int>();
  c.prefetch = (*vm)["prefetch"].as<int>();
  c.throughput_skip = non_negative<std::size_t>(*vm, "throughput-skip");
  c.evaluate = !(*vm)["no-eval"].as<bool>();
  c.verbose = !(*vm)["quiet"].as<bool>();
  c.stall_timeout_s = (*vm)["stall-timeout"].as<double>();
  if (!(c.stall_timeout_s >= 0)) usage_error(args, "--stall-timeout: give seconds >= 0 (0: never)");
  p.json = (*vm)["json"].as<std::string>();
  p.backend = (*vm)["backend"].as<std::string>();
  p.gpu_monitor.csv_path = (*vm)["gpu-monitor"].as<std::string>();
  p.gpu_monitor.interval_s = (*vm)["gpu-monitor-interval"].as<double>();
  if (!(p.gpu_monitor.interval_s > 0)) usage_error(args, "--gpu-monitor-interval: give a positive number of seconds");

  // Checks that need no data and no MPI, so a typo costs one line and no startup.
  const auto& models = nn::model_names();
  if (std::find(models.begin(), models.end(), c.model) == models.end()) {
    usage_error(args, "--model " + c.model + ": unknown model; use one of " + join(models));
  }
  const auto optimizers = optim::optimizer_names();
  if (std::find(optimizers.begin(), optimizers.end(), c.optimizer) == optimizers.end()) {
    usage_error(args, "--optimizer " + c.optimizer + ": unknown optimizer; use one of " + join(optimizers));
  }
  if (c.batch_size == 0) usage_error(args, "--batch-size 0: a batch needs at least one sample per rank");
  if (c.epochs < 1) usage_error(args, "--epochs " + std::to_string(c.epochs) + ": train at least one epoch");
  if (c.threads < 1) usage_error(args, "--threads " + std::to_string(c.threads) + ": at least one thread");
  if (c.device != "cpu" && c.device != "cuda") usage_error(args, "--device " + c.device + ": unknown device; use cpu or cuda");
  if (c.backward_passes_per_step < 1) usage_error(args, "--backward-passes-per-step: must be at least 1");
  if (c.loader_workers < 1 || c.prefetch < 1) usage_error(args, "--loader-workers and --prefetch must be at least 1");
  if (!(c.lr > 0)) usage_error(args, "--lr: the learning rate must be positive");
  (void)collectives::make_algorithm(collectives::Collective::allreduce, c.algo, "--algo");
  p.schedule = parse_schedule(*vm, args, c);
  (void)optim::LrSchedule(p.schedule);  // lr <= 0, warm-up longer than training, bad milestones
  p.sync_batchnorm = (*vm)["sync-batchnorm"].as<bool>();
  return p;
}

}  // namespace

int cmd_train(const Args& args) {
  const auto parsed = parse_train(args);
  if (!parsed) return 0;
  monitor::NodeMonitor gpu_monitor(parsed->gpu_monitor);  // before MPI: without NVML every rank stops here
  auto communicator = comm::make_communicator(parsed->backend);
  train::Trainer trainer(parsed->config, *communicator);
  if (parsed->sync_batchnorm) train::enable_sync_batchnorm(trainer.model(), *communicator);
  optim::ScheduleConfig sc = parsed->schedule;
  sc.global_batch = static_cast<int>(trainer.global_batch());
  sc.workers = communicator->size();  // `size` in Horovod's warm-up
  sc.steps_per_epoch = static_cast<long>(trainer.steps_per_epoch());
  const optim::LrSchedule schedule(sc);
  trainer.set_lr_schedule([&schedule](long step) { return schedule.lr(step); });
  if (!plain_constant(sc)) trainer.add_preamble(schedule.table());
  const bool writer = communicator->rank() == 0 && !parsed->json.empty();
  nlohmann::json doc = make_envelope("train", 1, args.full);
  doc["config"] = train::config_json(parsed->config);
  doc["ranks"] = communicator->size();
  doc["backend"] = communicator->backend();
  doc["device"] = trainer.device();
  doc["global_batch"] = trainer.global_batch();
  doc["steps_per_epoch"] = trainer.steps_per_epoch();
  doc["parameters"] = trainer.model().parameters().size();
  doc["lr_schedule"] = schedule.to_json();
  doc["sync_batchnorm"] = parsed->sync_batchnorm;
  doc["load_average_start"] = load_average();
  doc["epochs"] = nlohmann::json::array();
  doc["complete"] = false;
  if (writer) write_json_file(parsed->json, doc);  // an unwritable path fails now, not after an epoch
  trainer.set_epoch_callback([&](const train::EpochRecord& r) {
    doc["epochs"].push_back(r);
    if (writer) write_json_file(parsed->json, doc);
  });
  gpu_monitor.start();
  const train::TrainResult result = trainer.run();
  doc["gpu_monitor"] = gpu_monitor.finish();  // null without --gpu-monitor or on ranks that do not sample
  doc["averaging"] = result.averaging;
  doc["seconds"] = result.seconds;
  doc["load_average_end"] = load_average();
  doc["complete"] = true;
  if (writer) write_json_file(parsed->json, doc);
  return 0;
}

}  // namespace scalelab::cli
