// The configurations `scalelab converge` compares (the course's large-batch lesson, after Goyal et
// al. 2017 and You et al. 2017/2019), built from a few settings:
//   baseline       small global batch B (--base-batch), --optimizer at --lr
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

namespace scalelab::cli {

struct ConvergeSettings {
  std::string model = "mlp";
  std::string dataset = "fashion-mnist";
  std::string data_dir;
  int epochs = 5;
  std::size_t base_batch = 32;
  std::size_t micro_batch = 0;      // per emulated worker per backward pass; 0: base_batch
  int scale = 16;                   // large global batch = base_batch * scale
  int layerwise_scale = 32;         // LARS / LAMB global batch = base_batch * layerwise_scale
  std::string optimizer = "sgd";    // baseline, naive, linear, linear-warmup, sqrt
  double lr = 0.01;                 // at base_batch (the reference batch of the scaling rules)
  float momentum = 0.9f;
  float weight_decay = 0.0f;
  optim::WarmupKind warmup = optim::WarmupKind::gradual;
  double warmup_epochs = 1.0;
  optim::DecayKind decay = optim::DecayKind::cosine;
  std::vector<double> step_epochs;
  double step_gamma = 0.1;
  double poly_power = 2.0;
  double lars_lr = 5.0;
  float lars_eta = 0.001f;
  double lamb_lr = 0.02;
  std::vector<std::string> configs;  // empty: all, in the order above
  std::uint64_t seed = 42;
  int threads = 1;
  std::size_t max_steps = 0;         // cap on steps per epoch (quick runs); 0: whole epochs
  double target_accuracy = 0.85;
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

// Checks the settings (usage errors naming the flag: unknown names, lr <= 0, warm-up longer than
// training, a batch that does not divide among the emulated workers or the ranks) and returns
// the runs. `ranks`: the ranks that will train (each emulated worker count must divide by it).
[[nodiscard]] std::vector<ConvergeRun> make_converge_plan(const ConvergeSettings& s, int ranks);

}  // namespace scalelab::cli
