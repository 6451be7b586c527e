// SGD step (see sgd.h): one fused pass over the flat parameter, gradient and momentum buffers.
#include "optim/sgd.h"

#include "core/error.h"

namespace scalelab::optim {

Sgd::Sgd(const OptimizerOptions& options) : Optimizer(options) { options.validate(); }

std::vector<std::string> Sgd::state_names() const {
  if (options_.momentum == 0.0f) return {};
  return {"momentum_buffer"};
}

void Sgd::step(nn::ParameterSet& params, float lr) {
  check_lr(lr);
  bind(params);
  float* p = params.values().data();
  const float* g = params.grads().data();
  const std::size_t n = params.size();
  const float wd = options_.weight_decay, mu = options_.momentum, damp = 1.0f - options_.dampening;
  if (mu == 0.0f) {
    for (std::size_t i = 0; i < n; ++i) p[i] -= lr * (g[i] + wd * p[i]);
  } else {
    float* buf = segment(0);
    const bool first = steps_ == 0;
    const bool nesterov = options_.nesterov;
    for (std::size_t i = 0; i < n; ++i) {
      float gi = g[i] + wd * p[i];
      float b = first ? gi : mu * buf[i] + damp * gi;
      buf[i] = b;
      p[i] -= lr * (nesterov ? gi + mu * b : b);
    }
  }
  ++steps_;
}

}  // namespace scalelab::optim
