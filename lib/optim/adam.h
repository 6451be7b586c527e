// Adam with PyTorch's semantics and defaults (betas 0.9, 0.999, eps 1e-8, L2 weight decay added
// to the gradient, not decoupled):
//   g = grad + weight_decay * p;  m = b1 m + (1 - b1) g;  v = b2 v + (1 - b2) g^2;  t = t + 1
//   p -= lr / (1 - b1^t) * m / (sqrt(v) / sqrt(1 - b2^t) + eps)
#pragma once
#include "optim/optimizer.h"

namespace scalelab::optim {

class Adam final : public Optimizer {
 public:
  explicit Adam(const OptimizerOptions& options);
  [[nodiscard]] std::string name() const override { return "adam"; }
  void step(nn::ParameterSet& params, float lr) override;

 protected:
  [[nodiscard]] std::vector<std::string> state_names() const override { return {"exp_avg", "exp_avg_sq"}; }
};

}  // namespace scalelab::optim
