// LARS kernel and optimizer (see lars.h).
#include "optim/lars.h"

#include <cmath>
#include <string>

#include "core/error.h"

namespace scalelab::optim {

namespace {
// Euclidean norm accumulated in double: layers reach millions of elements.
double norm2(std::span<const float> x) {
  double s = 0.0;
  for (float v : x) s += double(v) * double(v);
  return std::sqrt(s);
}
}  // namespace

bool layerwise_adapts(nn::ParamKind kind, const OptimizerOptions& options) {
  return !options.exclude_bias_and_norm || kind == nn::ParamKind::weight;
}

float lars_update(std::span<float> w, std::span<const float> g, std::span<float> velocity, float lr,
                  const OptimizerOptions& options, bool adapt) {
  float trust = 1.0f;
  float wd = 0.0f;
  if (adapt) {
    wd = options.weight_decay;
    const double wn = norm2(w);
    const double gn = norm2(g);
    if (wn > 0.0 && gn > 0.0) trust = float(options.trust_coefficient * wn / (gn + wd * wn));
  }
  const float scaled = lr * trust;
  const float mu = options.momentum;
  for (std::size_t i = 0; i < w.size(); ++i) {
    velocity[i] = mu * velocity[i] + scaled * (g[i] + wd * w[i]);
    w[i] -= velocity[i];
  }
  return trust;
}

Lars::Lars(const OptimizerOptions& options) : Optimizer(options) {
  options.validate();
  if (options.nesterov) throw_parameter(ErrorKind::usage, "nesterov", ": LARS here uses plain momentum; leave nesterov off");
}

void Lars::step(nn::ParameterSet& params, float lr) {
  check_lr(lr);
  bind(params);
  if (trust_.size() != params.count()) trust_.assign(params.count(), 1.0f);
  std::span<float> values = params.values();
  std::span<const float> grads = params.grads();
  std::span<float> velocity(segment(0), params.size());
  for (std::size_t p = 0; p < params.count(); ++p) {
    const auto& info = params.info(p);
    trust_[p] = lars_update(values.subspan(info.offset, info.size), grads.subspan(info.offset, info.size),
                            velocity.subspan(info.offset, info.size), lr, options_,
                            layerwise_adapts(info.kind, options_));
  }
  ++steps_;
}

}  // namespace scalelab::optim
