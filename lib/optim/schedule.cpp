// Learning-rate schedules: scaling rule, warm-up and decay composed (see schedule.h).
#include "optim/schedule.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include <fmt/format.h>

#include "core/error.h"

namespace scalelab::optim {

namespace {

template <typename Enum, std::size_t N>
Enum parse_name(const std::string& name, const std::string& flag, const std::pair<const char*, Enum> (&table)[N]) {
  std::string valid;
  for (const auto& [n, e] : table) {
    if (name == n) return e;
    valid += valid.empty() ? n : std::string(", ") + n;
  }
  throw_usage(fmt::format("{}: unknown value '{}'; use one of {}", flag, name, valid));
}

constexpr std::pair<const char*, ScalingRule> kScaling[] = {
    {"none", ScalingRule::none}, {"linear", ScalingRule::linear}, {"sqrt", ScalingRule::sqrt}};
constexpr std::pair<const char*, WarmupKind> kWarmup[] = {{"none", WarmupKind::none},
                                                          {"gradual", WarmupKind::gradual},
                                                          {"constant", WarmupKind::constant},
                                                          {"horovod", WarmupKind::horovod}};
constexpr std::pair<const char*, DecayKind> kDecay[] = {{"constant", DecayKind::constant},
                                                        {"step", DecayKind::step},
                                                        {"cosine", DecayKind::cosine},
                                                        {"polynomial", DecayKind::polynomial}};

template <typename Enum, std::size_t N>
std::string name_of(Enum e, const std::pair<const char*, Enum> (&table)[N]) {
  for (const auto& [n, v] : table) {
    if (v == e) return n;
  }
  return "?";
}

}  // namespace

ScalingRule parse_scaling_rule(const std::string& name, const std::string& flag) {
  return parse_name(name, flag, kScaling);
}
WarmupKind parse_warmup_kind(const std::string& name, const std::string& flag) {
  return parse_name(name, flag, kWarmup);
}
DecayKind parse_decay_kind(const std::string& name, const std::string& flag) {
  return parse_name(name, flag, kDecay);
}
std::string to_string(ScalingRule r) { return name_of(r, kScaling); }
std::string to_string(WarmupKind w) { return name_of(w, kWarmup); }
std::string to_string(DecayKind d) { return name_of(d, kDecay); }

LrSchedule::LrSchedule(ScheduleConfig config) : config_(std::move(config)) {
  const auto& c = config_;
  if (!(c.base_lr > 0.0) || !std::isfinite(c.base_lr)) {
    throw_usage(fmt::format("--lr: learning rate {} must be a positive number; try 0.1", c.base_lr));
  }
  if (c.reference_batch <= 0) {
    throw_usage(fmt::format("--lr-reference-batch: {} must be a positive batch size", c.reference_batch));
  }
  if (c.global_batch <= 0) throw_usage(fmt::format("global batch {} must be positive", c.global_batch));
  if (!(c.epochs > 0.0)) throw_usage(fmt::format("--epochs: {} must be positive", c.epochs));
  if (c.steps_per_epoch <= 0) throw_usage(fmt::format("steps per epoch {} must be positive", c.steps_per_epoch));
  if (c.warmup != WarmupKind::none) {
    if (!(c.warmup_epochs > 0.0)) {
      throw_usage(fmt::format("--warmup-epochs: {} must be positive with --warmup {}", c.warmup_epochs,
                              to_string(c.warmup)));
    }
    if (c.warmup_epochs > c.epochs) {
      throw_usage(fmt::format("--warmup-epochs: a warm-up of {} epochs is longer than training ({} epochs); "
                              "shorten the warm-up or train longer",
                              c.warmup_epochs, c.epochs));
    }
  }
  if (c.warmup == WarmupKind::horovod && c.workers < 1) {
    throw_usage(fmt::format("--warmup horovod: {} workers; need at least 1", c.workers));
  }
  if (c.decay == DecayKind::step) {
    if (c.step_epochs.empty()) throw_usage("--lr-steps: step decay needs at least one milestone epoch, e.g. 30,60,80");
    for (double e : c.step_epochs) {
      if (!(e > 0.0) || e >= c.epochs) {
        throw_usage(fmt::format("--lr-steps: milestone epoch {} is outside the run (0, {})", e, c.epochs));
      }
    }
    if (!(c.step_gamma > 0.0) || c.step_gamma > 1.0) {
      throw_usage(fmt::format("--lr-gamma: {} must be in (0, 1]", c.step_gamma));
    }
  }
  if (c.decay == DecayKind::polynomial && !(c.poly_power > 0.0)) {
    throw_usage(fmt::format("--lr-power: {} must be positive", c.poly_power));
  }
  switch (c.scaling) {
    case ScalingRule::none: scale_ = 1.0; break;
    case ScalingRule::linear: scale_ = double(c.global_batch) / c.reference_batch; break;
    case ScalingRule::sqrt: scale_ = std::sqrt(double(c.global_batch) / c.reference_batch); break;
  }
  peak_lr_ = c.base_lr * scale_;
  if (c.end_lr < 0.0 || c.end_lr > peak_lr_) {
    throw_usage(fmt::format("--lr-end: {} must be between 0 and the peak lr {}", c.end_lr, peak_lr_));
  }
  start_lr_ = c.warmup_start_lr >= 0.0 ? c.warmup_start_lr : c.base_lr;
  if ((c.warmup == WarmupKind::gradual || c.warmup == WarmupKind::constant) && !(start_lr_ > 0.0)) {
    throw_usage(fmt::format("--warmup-start-lr: {} would make the first steps move nothing; start from a positive lr",
                            start_lr_));
  }
  total_steps_ = std::max(1L, std::lround(c.epochs * double(c.steps_per_epoch)));
  warmup_steps_ = c.warmup == WarmupKind::none ? 0 : std::lround(c.warmup_epochs * double(c.steps_per_epoch));
  warmup_steps_ = std::min(warmup_steps_, total_steps_);
}

double LrSchedule::decayed_peak(long step) const {
  const auto& c = config_;
  switch (c.decay) {
    case DecayKind::constant: return peak_lr_;
    case DecayKind::step: {
      const double epoch = double(step) / double(c.steps_per_epoch);
      double lr = peak_lr_;
      for (double milestone : c.step_epochs) {
        if (epoch >= milestone) lr *= c.step_gamma;
      }
      return lr;
    }
    case DecayKind::cosine:
    case DecayKind::polynomial: {
      const double span = double(std::max(1L, total_steps_ - warmup_steps_));
      const double p = std::clamp(double(step - warmup_steps_) / span, 0.0, 1.0);
      const double shape = c.decay == DecayKind::cosine ? 0.5 * (1.0 + std::cos(std::numbers::pi * p))
                                                        : std::pow(1.0 - p, c.poly_power);
      return c.end_lr + (peak_lr_ - c.end_lr) * shape;
    }
  }
  return peak_lr_;
}

double LrSchedule::lr(long step) const {
  step = std::max(0L, step);
  if (step < warmup_steps_) {
    const double frac = double(step) / double(warmup_steps_);
    switch (config_.warmup) {
      case WarmupKind::none: break;
      case WarmupKind::gradual: return start_lr_ + (peak_lr_ - start_lr_) * frac;
      case WarmupKind::constant: return start_lr_;
      case WarmupKind::horovod: {
        const double size = config_.workers;
        const double epoch = double(step) / double(config_.steps_per_epoch);
        return peak_lr_ / size * ((size - 1.0) / config_.warmup_epochs * epoch + 1.0);
      }
    }
  }
  return decayed_peak(step);
}

std::vector<long> LrSchedule::notable_steps() const {
  std::vector<long> steps{0, total_steps_ - 1};
  if (warmup_steps_ > 0) {
    steps.push_back(warmup_steps_ / 2);
    steps.push_back(std::max(0L, warmup_steps_ - 1));
    steps.push_back(warmup_steps_);
  }
  for (double m : config_.step_epochs) {
    if (config_.decay != DecayKind::step) break;
    const long s = std::lround(m * double(config_.steps_per_epoch));
    steps.push_back(s - 1);
    steps.push_back(s);
  }
  const long whole_epochs = static_cast<long>(config_.epochs);
  const long stride = std::max(1L, whole_epochs / 8);
  for (long e = stride; e < whole_epochs; e += stride) steps.push_back(e * config_.steps_per_epoch);
  std::erase_if(steps, [&](long s) { return s < 0 || s >= total_steps_; });
  std::sort(steps.begin(), steps.end());
  steps.erase(std::unique(steps.begin(), steps.end()), steps.end());
  return steps;
}

std::string LrSchedule::table() const {
  const auto& c = config_;
  std::string out = fmt::format(
      "lr schedule: base {:g} at batch {}, scaling {} (x{:.4g}) -> peak {:g} at global batch {}; warm-up {}",
      c.base_lr, c.reference_batch, to_string(c.scaling), scale_, peak_lr_, c.global_batch, to_string(c.warmup));
  if (c.warmup != WarmupKind::none) out += fmt::format(" over {:g} epochs ({} steps)", c.warmup_epochs, warmup_steps_);
  out += fmt::format("; decay {}\n", to_string(c.decay));
  out += fmt::format("  {:>8} {:>8}  {:>10}\n", "step", "epoch", "lr");
  for (long s : notable_steps()) {
    out += fmt::format("  {:>8} {:>8.3f}  {:>10.5g}\n", s, double(s) / double(c.steps_per_epoch), lr(s));
  }
  return out;
}

nlohmann::json LrSchedule::to_json() const {
  const auto& c = config_;
  nlohmann::json points = nlohmann::json::array();
  for (long s : notable_steps()) {
    points.push_back({{"step", s}, {"epoch", double(s) / double(c.steps_per_epoch)}, {"lr", lr(s)}});
  }
  return {{"base_lr", c.base_lr},
          {"scaling", to_string(c.scaling)},
          {"reference_batch", c.reference_batch},
          {"global_batch", c.global_batch},
          {"scale_factor", scale_},
          {"peak_lr", peak_lr_},
          {"warmup", to_string(c.warmup)},
          {"warmup_epochs", c.warmup_epochs},
          {"warmup_start_lr", c.warmup == WarmupKind::none ? peak_lr_ : start_lr_},
          {"warmup_steps", warmup_steps_},
          {"workers", c.workers},
          {"decay", to_string(c.decay)},
          {"step_epochs", c.step_epochs},
          {"step_gamma", c.step_gamma},
          {"poly_power", c.poly_power},
          {"end_lr", c.end_lr},
          {"epochs", c.epochs},
          {"steps_per_epoch", c.steps_per_epoch},
          {"total_steps", total_steps_},
          {"points", points}};
}

}  // namespace scalelab::optim
