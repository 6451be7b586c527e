// LAMB kernel and optimizer (see lamb.h).
#include "optim/lamb.h"

#include <cmath>
#include <string>

#include "core/error.h"
#include "optim/lars.h"  // layerwise_adapts

namespace scalelab::optim {

float lamb_update(std::span<float> w, std::span<const float> g, std::span<float> m, std::span<float> v,
                  std::int64_t t, float lr, const OptimizerOptions& options, bool adapt) {
  const float b1 = options.beta1;
  const float b2 = options.beta2;
  const float c1 = float(1.0 / (1.0 - std::pow(double(b1), double(t))));
  const float c2 = float(1.0 / (1.0 - std::pow(double(b2), double(t))));
  const float eps = options.eps;
  const float wd = adapt ? options.weight_decay : 0.0f;
  // Pass 1: moments, and the squared norms of w and of the update r.
  double wn2 = 0.0;
  double rn2 = 0.0;
  for (std::size_t i = 0; i < w.size(); ++i) {
    m[i] = b1 * m[i] + (1.0f - b1) * g[i];
    v[i] = b2 * v[i] + (1.0f - b2) * g[i] * g[i];
    const float r = (m[i] * c1) / (std::sqrt(v[i] * c2) + eps) + wd * w[i];
    wn2 += double(w[i]) * double(w[i]);
    rn2 += double(r) * double(r);
  }
  float trust = 1.0f;
  if (adapt && wn2 > 0.0 && rn2 > 0.0) trust = float(std::sqrt(wn2 / rn2));
  // Pass 2: the same expression for r from the updated moments, applied.
  const float scaled = lr * trust;
  for (std::size_t i = 0; i < w.size(); ++i) {
    const float r = (m[i] * c1) / (std::sqrt(v[i] * c2) + eps) + wd * w[i];
    w[i] -= scaled * r;
  }
  return trust;
}

Lamb::Lamb(const OptimizerOptions& options) : Optimizer(options) { options.validate(); }

void Lamb::step(nn::ParameterSet& params, float lr) {
  check_lr(lr);
  bind(params);
  ++steps_;
  if (trust_.size() != params.count()) trust_.assign(params.count(), 1.0f);
  std::span<float> values = params.values();
  std::span<const float> grads = params.grads();
  std::span<float> m(segment(0), params.size());
  std::span<float> v(segment(1), params.size());
  for (std::size_t p = 0; p < params.count(); ++p) {
    const auto& info = params.info(p);
    const std::size_t o = info.offset, n = info.size;
    trust_[p] = lamb_update(values.subspan(o, n), grads.subspan(o, n), m.subspan(o, n), v.subspan(o, n), steps_, lr,
                            options_, layerwise_adapts(info.kind, options_));
  }
}

}  // namespace scalelab::optim
