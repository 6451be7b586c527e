// Learning-rate schedules for large-batch training (Goyal et al. 2017; Horovod's warm-up).
//
// A schedule is three composable parts, applied in this order:
//   1. scaling: the peak lr is base_lr scaled by the global-batch ratio r = global_batch /
//      reference_batch: none (peak = base), linear (peak = base * r), sqrt (peak = base * sqrt r).
//      base_lr is the lr tuned at reference_batch (256 in Goyal et al.; scalelab converge uses its
//      baseline configuration's global batch).
//   2. warm-up over warmup_epochs, starting from warmup_start_lr (default: the unscaled base_lr):
//      gradual (per-step linear ramp to the peak), constant (start lr, then jump to the peak), or
//      horovod: lr'(epoch) = peak/size * ((size-1)/warmup_epochs * epoch + 1), epoch fractional,
//      size = workers (equal to gradual under linear scaling with r = workers).
//   3. decay of the peak over the whole run: constant, step (times gamma at each milestone epoch),
//      cosine or polynomial (from the end of warm-up down to end_lr at total_steps).
// Time is the global optimizer step t = 0 .. total_steps-1; epoch = t / steps_per_epoch.
// Used by the trainer's per-step lr callback (lr(t)) and printed at start (table()).
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace scalelab::optim {

enum class ScalingRule { none, linear, sqrt };
enum class WarmupKind { none, gradual, constant, horovod };
enum class DecayKind { constant, step, cosine, polynomial };

struct ScheduleConfig {
  double base_lr = 0.1;                    // lr at reference_batch; must be > 0
  ScalingRule scaling = ScalingRule::none;
  int reference_batch = 256;               // batch base_lr was tuned for
  int global_batch = 256;                  // images per optimizer step, all workers together
  WarmupKind warmup = WarmupKind::none;
  double warmup_epochs = 0.0;              // may be fractional
  double warmup_start_lr = -1.0;           // < 0: the unscaled base_lr (Goyal et al.)
  int workers = 1;                         // `size` in Horovod's warm-up formula
  DecayKind decay = DecayKind::constant;
  std::vector<double> step_epochs;         // step decay milestones, epochs from the start
  double step_gamma = 0.1;
  double poly_power = 2.0;
  double end_lr = 0.0;                     // cosine / polynomial floor
  double epochs = 1.0;                     // length of the run
  long steps_per_epoch = 1;

  // Throws a usage error naming the field at fault (core/error.h's throw_parameter): lr not
  // positive, warm-up longer than training, milestones outside the run, gamma outside (0, 1] ...
  void validate() const;
};

// Parses the names to_string() gives; an unknown name throws a usage error listing the valid ones,
// naming `parameter` (ScheduleConfig's field by default).
[[nodiscard]] ScalingRule parse_scaling_rule(const std::string& name, const std::string& parameter = "scaling");
[[nodiscard]] WarmupKind parse_warmup_kind(const std::string& name, const std::string& parameter = "warmup");
[[nodiscard]] DecayKind parse_decay_kind(const std::string& name, const std::string& parameter = "decay");
[[nodiscard]] std::string to_string(ScalingRule r);
[[nodiscard]] std::string to_string(WarmupKind w);
[[nodiscard]] std::string to_string(DecayKind d);

class LrSchedule {
 public:
  // Validates `config` (ScheduleConfig::validate).
  explicit LrSchedule(ScheduleConfig config);

  // Learning rate for global optimizer step `step` (0-based). Cheap: no allocation.
  [[nodiscard]] double lr(long step) const;
  [[nodiscard]] double peak_lr() const { return peak_lr_; }
  [[nodiscard]] double scale_factor() const { return scale_; }
  [[nodiscard]] long total_steps() const { return total_steps_; }
  [[nodiscard]] long warmup_steps() const { return warmup_steps_; }
  [[nodiscard]] const ScheduleConfig& config() const { return config_; }

  // The steps worth showing: 0, inside and at the end of warm-up, around milestones, each
  // epoch boundary (at most ~12 of them) and the last step. Sorted, unique.
  [[nodiscard]] std::vector<long> notable_steps() const;
  // A short human-readable description and table of lr at notable_steps(), for the console.
  [[nodiscard]] std::string table() const;
  // The configuration, peak lr and the lr at notable_steps(), for results files.
  [[nodiscard]] nlohmann::json to_json() const;

 private:
  [[nodiscard]] double decayed_peak(long step) const;

  ScheduleConfig config_;
  double scale_ = 1.0;
  double peak_lr_ = 0.0;
  double start_lr_ = 0.0;
  long total_steps_ = 0;
  long warmup_steps_ = 0;
};

}  // namespace scalelab::optim
