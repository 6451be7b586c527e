// The configurations `scalelab converge` compares (the course's large-batch lesson, after Goyal et
// al. 2017 and You et al. 2017/2019), built from a few settings:
//   baseline       small global batch B (--base-batch), --optimizer at --lr (the course uses sgd)
//   naive          B x scale, same lr: fewer steps of the same size, so the same epochs learn less
//   linear         B x scale, lr x scale (linear scaling rule), no warm-up: unstable early
//   linear-warmup  B x scale, lr x scale reached by gradual warm-up from lr over --warmup-epochs
//   sqrt           B x scale, lr x sqrt(scale), with the same warm-up
//   lars, lamb     B x layerwise-scale (larger still), layer-wise trust ratios, their own lr,
//                  gradual warm-up from lr / layerwise-scale over --warmup-epochs
// Every configuration trains the same epochs, with the same decay (--lr-schedule) and seed.
// A large global batch is made of workers = global batch / micro-batch emulated workers: each
// rank runs workers/ranks micro-batches per step and accumulates the gradients
// (backward_passes_per_step), so a laptop shows what `workers` GPUs would.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "optim/optimizer.h"
#include "optim/schedule.h"
#include "train_options.h"

namespace scalelab::cli {

struct ConvergeSettings {
  // The shared training options (train_options.h): model, data, epochs, --optimizer and --lr of
  // the non-layer-wise configurations, momentum, weight decay, --base-batch (the baseline's global
  // batch, schedule.reference_batch), the warm-up (warmup_named, schedule.warmup_epochs) and the
  // decay every configuration uses. Checked when read.
  TrainOptions train;
  std::size_t micro_batch = 0;      // per emulated worker per backward pass; 0: the base batch
  int scale = 16;                   // large global batch = base batch * scale
  int layerwise_scale = 32;         // LARS / LAMB global batch = base batch * layerwise_scale
  double lars_lr = 5.0;
  float lars_eta = 0.001f;
  double lamb_lr = 0.02;
  std::vector<std::string> configs;  // empty: all, in the order above
  double target_accuracy = 0.85;

  [[nodiscard]] std::size_t base_batch() const { return static_cast<std::size_t>(train.schedule.reference_batch); }
};

struct ConvergeRun {
  std::string name;          // "linear-warmup"
  std::string description;   // "batch 512, lr x16 with 1-epoch gradual warm-up"
  std::string optimizer;
  optim::OptimizerOptions optimizer_options;
  std::size_t global_batch = 0;
  std::size_t micro_batch = 0;
  int workers = 1;           // emulated workers = global_batch / micro_batch
  optim::ScheduleConfig schedule;  // steps_per_epoch is filled in once the trainer knows it
};

// Names of the configurations, in the order they run.
[[nodiscard]] const std::vector<std::string>& converge_config_names();

// Checks what the shared options' validation cannot (usage errors naming the flag: unknown
// configurations, the LARS/LAMB lrs, a batch that does not divide among the emulated workers or the
// ranks; each run's schedule through ScheduleConfig::validate) and returns the runs. `ranks`: the ranks that will train (each emulated worker count must divide by it).
[[nodiscard]] std::vector<ConvergeRun> make_converge_plan(const ConvergeSettings& s, int ranks);

}  // namespace scalelab::cli
