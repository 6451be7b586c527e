// Adam step (see adam.h): one fused pass over the parameter, gradient and moment buffers.
#include "optim/adam.h"

#include <cmath>

#include "core/error.h"

namespace scalelab::optim {

Adam::Adam(const OptimizerOptions& options) : Optimizer(options) { options.validate(); }

void Adam::step(nn::ParameterSet& params, float lr) {
  check_lr(lr);
  bind(params);
  ++steps_;
  float* p = params.values().data();
  const float* g = params.grads().data();
  float* m = segment(0);
  float* v = segment(1);
  const std::size_t n = params.size();
  const float b1 = options_.beta1, b2 = options_.beta2, eps = options_.eps, wd = options_.weight_decay;
  // Bias corrections in double: b^t for large t underflows gracefully and stays exact longer.
  const double t = static_cast<double>(steps_);
  const float step_size = static_cast<float>(lr / (1.0 - std::pow(double(b1), t)));
  const float inv_sqrt_bc2 = static_cast<float>(1.0 / std::sqrt(1.0 - std::pow(double(b2), t)));
  for (std::size_t i = 0; i < n; ++i) {
    float gi = g[i] + wd * p[i];
    float mi = b1 * m[i] + (1.0f - b1) * gi;
    float vi = b2 * v[i] + (1.0f - b2) * gi * gi;
    m[i] = mi;
    v[i] = vi;
    p[i] -= step_size * mi / (std::sqrt(vi) * inv_sqrt_bc2 + eps);
  }
}

}  // namespace scalelab::optim
