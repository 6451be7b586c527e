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
Enum parse_name(const std::string& name, const std::string& parameter, const std::pair<const char*, Enum> (&table)[N]) {
  std::string valid;
  for (const auto& [n, e] : table) {
    if (name == n) return e;
    valid += valid.empty() ? n : std::string(", ") + n;
  }
  throw_parameter(ErrorKind::usage, parameter, fmt::format("{}: unknown value; use one of {}", name, valid));
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

ScalingRule parse_scaling_rule(const std::string& name, const std::string& parameter) {
  return parse_name(name, parameter, kScaling);
}
WarmupKind parse_warmup_kind(const std::string& name, const std::string& parameter) {
  return parse_name(name, parameter, kWarmup);
}
DecayKind parse_decay_kind(const std::string& name, const std::string& parameter) {
  return parse_name(name, parameter, kDecay);
}
std::string to_string(ScalingRule r) { return name_of(r, kScaling); }
std::string to_string(WarmupKind w) { return name_of(w, kWarmup); }
std::string to_string(DecayKind d) { return name_of(d, kDecay); }

void ScheduleConfig::validate() const {
  const auto bad = [](const char* parameter, const std::string& detail) {
    throw_parameter(ErrorKind::usage, parameter, detail);
  };
  if (!(base_lr > 0.0) || !std::isfinite(base_lr)) {
    bad("base_lr", fmt::format("{}: the learning rate must be a positive finite number; try 0.1", base_lr));
  }
  if (reference_batch <= 0) bad("reference_batch", fmt::format("{}: the reference batch must be at least 1", reference_batch));
  if (global_batch <= 0) bad("global_batch", fmt::format("{}: a step needs at least one sample", global_batch));
  if (!(epochs > 0.0) || !std::isfinite(epochs)) bad("epochs", fmt::format("{}: train at least one epoch", epochs));
  if (steps_per_epoch <= 0) bad("steps_per_epoch", fmt::format("{}: an epoch needs at least one step", steps_per_epoch));
  if (!(warmup_epochs >= 0.0) || !std::isfinite(warmup_epochs)) {
    bad("warmup_epochs", fmt::format("{}: give a warm-up length of 0 or more epochs", warmup_epochs));
  }
  if (warmup != WarmupKind::none) {
    if (!(warmup_epochs > 0.0)) {
      bad("warmup_epochs", fmt::format("{}: a {} warm-up needs a positive length in epochs, e.g. 1", warmup_epochs,
                                       to_string(warmup)));
    }
    if (warmup_epochs > epochs) {
      bad("warmup_epochs", fmt::format("{}: the warm-up is longer than training ({} epochs); "
                                       "shorten the warm-up or train longer",
                                       warmup_epochs, epochs));
    }
  }
  if (warmup == WarmupKind::horovod && workers < 1) {
    bad("workers", fmt::format("{}: Horovod's warm-up needs at least 1 worker", workers));
  }
  if (decay == DecayKind::step) {
    if (step_epochs.empty()) bad("step_epochs", ": step decay needs at least one milestone epoch, e.g. 30,60,80");
    for (double e : step_epochs) {
      if (!(e > 0.0) || e >= epochs) {
        bad("step_epochs", fmt::format("{}: the milestone epoch is outside the run (0, {})", e, epochs));
      }
    }
  }
  if (!(step_gamma > 0.0) || step_gamma > 1.0) bad("step_gamma", fmt::format("{}: give a decay factor in (0, 1]", step_gamma));
  if (!(poly_power > 0.0) || !std::isfinite(poly_power)) {
    bad("poly_power", fmt::format("{}: give a positive finite power, e.g. 2", poly_power));
  }
  double scale = 1.0;
  if (scaling == ScalingRule::linear) scale = double(global_batch) / reference_batch;
  if (scaling == ScalingRule::sqrt) scale = std::sqrt(double(global_batch) / reference_batch);
  const double peak = base_lr * scale;
  if (!(end_lr >= 0.0) || end_lr > peak) {
    bad("end_lr", fmt::format("{}: the final lr must be between 0 and the peak lr {}", end_lr, peak));
  }
  const double start = warmup_start_lr >= 0.0 ? warmup_start_lr : base_lr;
  if ((warmup == WarmupKind::gradual || warmup == WarmupKind::constant) && !(start > 0.0)) {
    bad("warmup_start_lr", fmt::format("{}: the first steps would move nothing; start from a positive lr", start));
  }
}

LrSchedule::LrSchedule(ScheduleConfig config) : config_(std::move(config)) {
  config_.validate();
  const auto& c = config_;
  switch (c.scaling) {
    case ScalingRule::none: scale_ = 1.0; break;
    case ScalingRule::linear: scale_ = double(c.global_batch) / c.reference_batch; break;
    case ScalingRule::sqrt: scale_ = std::sqrt(double(c.global_batch) / c.reference_batch); break;
  }
  peak_lr_ = c.base_lr * scale_;
  start_lr_ = c.warmup_start_lr >= 0.0 ? c.warmup_start_lr : c.base_lr;
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
