// Optimizer base: state allocation and the learning-rate check shared by every optimizer.
#include "optim/optimizer.h"

#include <cmath>

#include <fmt/format.h>

#include "core/error.h"

namespace scalelab::optim {

void OptimizerOptions::validate() const {
  const auto bad = [](const char* parameter, float v, const char* fix) {
    throw_parameter(ErrorKind::usage, parameter, fmt::format("{:g}: {}", v, fix));
  };
  const auto in01 = [](float v) { return std::isfinite(v) && v >= 0.0f && v < 1.0f; };
  if (!in01(momentum)) bad("momentum", momentum, "give a momentum in [0, 1), e.g. 0.9");
  if (!(std::isfinite(dampening) && dampening >= 0.0f && dampening <= 1.0f)) bad("dampening", dampening, "give [0, 1]");
  if (!(std::isfinite(weight_decay) && weight_decay >= 0.0f)) bad("weight_decay", weight_decay, "give 0 or more, e.g. 5e-4");
  if (!in01(beta1)) bad("beta1", beta1, "give a value in [0, 1), e.g. 0.9");
  if (!in01(beta2)) bad("beta2", beta2, "give a value in [0, 1), e.g. 0.999");
  if (!(std::isfinite(eps) && eps > 0.0f)) bad("eps", eps, "give a small positive number, e.g. 1e-8");
  if (!(std::isfinite(trust_coefficient) && trust_coefficient > 0.0f)) {
    bad("trust_coefficient", trust_coefficient, "give a positive number, e.g. 0.001");
  }
  if (nesterov && (momentum <= 0.0f || dampening != 0.0f)) {
    throw_parameter(ErrorKind::usage, "nesterov", ": needs a positive momentum and zero dampening (as in PyTorch)");
  }
}

void Optimizer::bind(const nn::ParameterSet& params) {
  if (bound_size_ == params.size()) return;
  if (!params.finalized()) throw_runtime("optimizer " + name() + ": the parameter set is not built yet");
  segments_.clear();
  std::size_t n = params.size();
  auto names = state_names();
  for (std::size_t s = 0; s < names.size(); ++s) segments_.push_back({names[s], s * n, n});
  // Allocated here, once, before the first step: zero so that every page is touched now.
  state_.assign(names.size() * n, 0.0f);
  bound_size_ = n;
}

void Optimizer::check_lr(float lr) {
  if (!(lr > 0.0f) || !std::isfinite(lr))
    throw_parameter(ErrorKind::usage, "lr", fmt::format("{:g}: the learning rate must be a positive finite number, e.g. 0.001", lr));
}

}  // namespace scalelab::optim
