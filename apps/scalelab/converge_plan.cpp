// Building and checking the configurations of `scalelab converge` (see converge_plan.h).
#include "converge_plan.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "core/error.h"
#include "core/limits.h"
#include "core/text.h"

namespace scalelab::cli {

const std::vector<std::string>& converge_config_names() {
  static const std::vector<std::string> names = {"baseline", "naive", "linear", "linear-warmup", "sqrt", "lars", "lamb"};
  return names;
}

namespace {

// The shared schedule options (decay, milestones, reference batch, epochs) with no scaling and no
// warm-up, at `lr` and `global_batch`.
optim::ScheduleConfig base_schedule(const ConvergeSettings& s, double lr, std::size_t global_batch) {
  optim::ScheduleConfig c = s.train.schedule;
  c.base_lr = lr;
  c.scaling = optim::ScalingRule::none;
  c.warmup = optim::WarmupKind::none;
  c.global_batch = static_cast<int>(global_batch);
  c.workers = 1;
  c.steps_per_epoch = 1;  // until the trainer knows
  return c;
}

ConvergeRun make_run(const ConvergeSettings& s, const std::string& name) {
  ConvergeRun r;
  r.name = name;
  const double lr0 = s.train.config.lr;
  const double warmup_epochs = s.train.schedule.warmup_epochs;
  r.optimizer = s.train.config.optimizer;
  r.optimizer_options = s.train.config.optimizer_options;
  const std::size_t large = s.base_batch() * static_cast<std::size_t>(s.scale);
  const std::size_t larger = s.base_batch() * static_cast<std::size_t>(s.layerwise_scale);
  const std::string warm = fmt::format("{:g}-epoch {} warm-up", warmup_epochs, optim::to_string(s.train.warmup_named));
  if (name == "baseline") {
    r.global_batch = s.base_batch();
    r.schedule = base_schedule(s, lr0, r.global_batch);
    r.description = fmt::format("batch {}, lr {:g}", r.global_batch, lr0);
  } else if (name == "naive" || name == "linear" || name == "linear-warmup" || name == "sqrt") {
    r.global_batch = large;
    r.schedule = base_schedule(s, lr0, r.global_batch);
    if (name == "naive") {
      r.description = fmt::format("batch {} (x{}), same lr {:g}", large, s.scale, lr0);
    } else {
      r.schedule.scaling = name == "sqrt" ? optim::ScalingRule::sqrt : optim::ScalingRule::linear;
      if (name != "linear") {
        r.schedule.warmup = s.train.warmup_named;
        r.schedule.workers = static_cast<int>(large / (s.micro_batch ? s.micro_batch : s.base_batch()));
      }
      r.description = fmt::format("batch {}, lr x{}{}", large,
                                  name == "sqrt" ? fmt::format("{:.3g} (sqrt)", std::sqrt(double(s.scale)))
                                                 : std::to_string(s.scale),
                                  name == "linear" ? ", no warm-up" : ", " + warm);
    }
  } else {  // lars, lamb
    r.global_batch = larger;
    r.optimizer = name;
    const double lr = name == "lars" ? s.lars_lr : s.lamb_lr;
    r.optimizer_options.trust_coefficient = s.lars_eta;
    r.optimizer_options.eps = 1e-6f;  // LAMB's usual epsilon
    r.schedule = base_schedule(s, lr, r.global_batch);
    r.schedule.warmup = optim::WarmupKind::gradual;
    // Warm-up from the lr scaled down to the baseline batch, as Goyal et al. start from the
    // baseline's lr.
    r.schedule.warmup_start_lr = lr / s.layerwise_scale;
    r.description = fmt::format("batch {} (x{}), {} lr {:g}, {:g}-epoch warm-up from lr/{}", larger, s.layerwise_scale,
                                name == "lars" ? "LARS" : "LAMB", lr, warmup_epochs, s.layerwise_scale);
  }
  r.micro_batch = s.micro_batch ? s.micro_batch : s.base_batch();
  return r;
}

}  // namespace

std::vector<ConvergeRun> make_converge_plan(const ConvergeSettings& s, int ranks) {
  const auto& names = converge_config_names();
  for (std::size_t i = 0; i < s.configs.size(); ++i) {
    const std::string& c = s.configs[i];
    if (std::find(names.begin(), names.end(), c) == names.end()) {
      throw_usage(fmt::format("--configs {}: unknown configuration; use some of {}", c, join_list(names)));
    }
    if (std::find(s.configs.begin(), s.configs.begin() + static_cast<std::ptrdiff_t>(i), c) != s.configs.begin() + static_cast<std::ptrdiff_t>(i)) {
      throw_usage(fmt::format("--configs {}: given twice; name each configuration once", c));
    }
  }
  if (s.scale < 1 || s.layerwise_scale < 1) throw_usage("--scale and --layerwise-scale must be at least 1");
  for (auto [flag, scale] : {std::pair{"--scale", s.scale}, std::pair{"--layerwise-scale", s.layerwise_scale}}) {
    if (scale > limits::kMaxBackwardPasses) {
      throw_usage(fmt::format("{} {}: at most {} (the large batch is the base batch times this)", flag, scale,
                              limits::kMaxBackwardPasses));
    }
  }
  for (auto [flag, lr] : {std::pair{"--lars-lr", s.lars_lr}, std::pair{"--lamb-lr", s.lamb_lr}}) {
    if (!(lr > 0.0) || !std::isfinite(lr)) {
      throw_usage(fmt::format("{} {:g}: a learning rate must be a positive number", flag, lr));
    }
  }
  if (!(s.target_accuracy > 0.0 && s.target_accuracy <= 1.0)) {
    throw_usage(fmt::format("--target-accuracy {:g}: give a fraction in (0, 1], e.g. 0.85", s.target_accuracy));
  }
  std::vector<ConvergeRun> runs;
  for (const auto& name : names) {
    if (!s.configs.empty() && std::find(s.configs.begin(), s.configs.end(), name) == s.configs.end()) continue;
    ConvergeRun r = make_run(s, name);
    if (r.global_batch % r.micro_batch != 0) {
      throw_usage(fmt::format("--micro-batch {}: the {} global batch of {} does not divide among emulated workers "
                              "of {} samples each; use a micro-batch that divides it",
                              r.micro_batch, name, r.global_batch, r.micro_batch));
    }
    r.workers = static_cast<int>(r.global_batch / r.micro_batch);
    if (r.workers % ranks != 0) {
      throw_usage(fmt::format("{}: {} emulated workers (global batch {} / micro-batch {}) do not divide among {} ranks; "
                              "use a rank count that divides {} or a smaller --micro-batch",
                              name, r.workers, r.global_batch, r.micro_batch, ranks, r.workers));
    }
    // Validates the schedule (warm-up longer than training, bad milestones) and the run's optimizer
    // options (--lars-eta among them) now, before any configuration trains.
    r.schedule.validate();
    r.optimizer_options.validate();
    runs.push_back(std::move(r));
  }
  return runs;
}

}  // namespace scalelab::cli
