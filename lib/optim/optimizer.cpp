// Optimizer base: state allocation and the learning-rate check shared by every optimizer.
#include "optim/optimizer.h"

#include <cmath>

#include "core/error.h"

namespace scalelab::optim {

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
    throw_usage("learning rate " + std::to_string(lr) + ": it must be a positive number (e.g. --lr 0.001)");
}

}  // namespace scalelab::optim
