// `scalelab train [options]`: data-parallel training on CPU ranks, Horovod-style. Runs alone or
// under `scalelab run -np N -- train ...` / `mpirun -np N scalelab train ...`. The options are the
// shared training options (train_options.h), read and checked before MPI starts (a typo is one
// line, exit 2); then lib/train's Trainer runs on every rank and rank 0 prints Keras-style progress
// lines and writes --json after every epoch. --device picks the engine (lib/train/engine.h): CPU
// cores, or the GPU of each rank's local rank. The lr schedule flags build one optim::LrSchedule
// (lib/optim/schedule.h); --sync-batchnorm installs lib/train's SyncBatchNorm.
#include <fstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "comm/consistency.h"
#include "comm/factory.h"
#include "commands.h"
#include "core/results.h"
#include "load_report.h"
#include "monitor/node_monitor.h"
#include "optim/schedule.h"
#include "train/trainer.h"
#include "train_options.h"

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

// The 1-minute load average, recorded beside every timing (a busy machine slows everything).
double load_average() {
  std::ifstream in("/proc/loadavg");
  double l = -1;
  in >> l;
  return l;
}

struct Parsed {
  TrainOptions train;
  std::string json;
};

bool plain_constant(const optim::ScheduleConfig& s) {
  return s.scaling == optim::ScalingRule::none && s.warmup == optim::WarmupKind::none &&
         s.decay == optim::DecayKind::constant;
}

// Every option is read and checked (TrainConfig::validate, ScheduleConfig::validate) before MPI
// starts, so a typo costs one line and no startup.
std::optional<Parsed> parse_train(const Args& args) {
  po::options_description o("options");
  add_train_options(o, TrainOptionSet::full);
  o.add_options()("json", po::value<std::string>()->default_value(""),
                  "write per-epoch records here (rank 0, after every epoch)");
  auto vm = parse(args, kUsage, o);
  if (!vm) return std::nullopt;
  // --checkpoint "$CKPT" with CKPT unset would run a whole job without saving.
  refuse_empty_paths(*vm, {"json", "checkpoint", "resume", "timeline", "gpu-monitor"});
  // --resume F --checkpoint F continues one file; a record or trace over it would destroy it.
  check_distinct_files(*vm, {"json", "timeline", "gpu-monitor", "checkpoint"});
  check_distinct_files(*vm, {"json", "timeline", "gpu-monitor"}, "resume");
  return Parsed{read_train_options(*vm), (*vm)["json"].as<std::string>()};
}

// The options outside TrainConfig that must agree across ranks (the Trainer compares TrainConfig's
// own): the lr schedule and SyncBatchNorm, named as ScheduleConfig names them; and whether --json
// is given (rank 0 writes it: given to another rank alone, it would be ignored without a word).
std::vector<comm::NamedValue> agreed_options(const TrainOptions& t, const std::string& json) {
  const optim::ScheduleConfig& s = t.schedule;
  std::string steps;
  for (const double e : s.step_epochs) {
    if (!steps.empty()) steps += ',';
    steps += fmt::format("{}", e);
  }
  return {{"scaling", optim::to_string(s.scaling)},
          {"reference_batch", std::to_string(s.reference_batch)},
          {"warmup", optim::to_string(s.warmup)},
          {"warmup_epochs", fmt::format("{}", s.warmup_epochs)},
          {"decay", optim::to_string(s.decay)},
          {"step_epochs", steps},
          {"step_gamma", fmt::format("{}", s.step_gamma)},
          {"poly_power", fmt::format("{}", s.poly_power)},
          {"sync_batchnorm", t.sync_batchnorm ? "on" : "off"},
          {"json", json.empty() ? "not given" : "given"}};
}

}  // namespace

void check_train_args(const Args& args) { (void)parse_train(args); }

int cmd_train(const Args& args) {
  const auto parsed = parse_train(args);
  if (!parsed) return 0;
  const TrainOptions& t = parsed->train;
  monitor::NodeMonitor gpu_monitor(t.gpu_monitor);  // before MPI: without NVML every rank stops here
  auto communicator = comm::make_communicator(t.backend);
  comm::require_same_fields(*communicator, agreed_options(t, parsed->json));  // collective; exit 2 naming each that differs
  train::Trainer trainer(t.config, *communicator);
  if (t.sync_batchnorm) trainer.enable_sync_batchnorm();
  optim::ScheduleConfig sc = t.schedule;
  sc.global_batch = static_cast<int>(trainer.global_batch());
  sc.workers = communicator->size();  // `size` in Horovod's warm-up
  sc.steps_per_epoch = static_cast<long>(trainer.steps_per_epoch());
  const optim::LrSchedule schedule(sc);
  trainer.set_lr_schedule([&schedule](long step) { return schedule.lr(step); });
  if (!plain_constant(sc)) trainer.add_preamble(schedule.table());
  const bool writer = communicator->rank() == 0 && !parsed->json.empty();
  nlohmann::json doc = make_envelope("train", 1, args.full);
  doc["config"] = train::config_json(t.config);
  doc["ranks"] = communicator->size();
  doc["backend"] = communicator->backend();
  doc["device"] = trainer.device();
  doc["global_batch"] = trainer.global_batch();
  doc["steps_per_epoch"] = trainer.steps_per_epoch();
  doc["parameters"] = trainer.model().parameters().size();
  doc["lr_schedule"] = schedule.to_json();
  doc["sync_batchnorm"] = t.sync_batchnorm;
  doc["load_average_start"] = load_average();
  doc["epochs"] = nlohmann::json::array();
  doc["complete"] = false;
  if (writer) write_json_file(parsed->json, doc);  // an unwritable path fails now, not after an epoch
  trainer.set_epoch_callback([&](const train::EpochRecord& r) {
    doc["epochs"].push_back(r);
    if (writer) write_json_file(parsed->json, doc);
  });
  gpu_monitor.start();
  const LoadReport load;  // did every rank get its cores while it trained (load_report.h)
  const train::TrainResult result = trainer.run();
  doc["load"] = load.finish(*communicator, t.config.threads);
  doc["gpu_monitor"] = gpu_monitor.finish();  // null without --gpu-monitor or on ranks that do not sample
  doc["averaging"] = result.averaging;
  if (!result.execution.empty()) doc["execution"] = result.execution;
  doc["precision"] = result.precision;
  doc["seconds"] = result.seconds;
  doc["load_average_end"] = load_average();
  doc["complete"] = true;
  if (writer) write_json_file(parsed->json, doc);
  return 0;
}

}  // namespace scalelab::cli
