// SGD with momentum, dampening, Nesterov momentum and L2 weight decay, with PyTorch's semantics:
//   g = grad + weight_decay * p
//   buf = g on the first step, else momentum * buf + (1 - dampening) * g
//   g = nesterov ? g + momentum * buf : buf          (only when momentum != 0)
//   p -= lr * g
#pragma once
#include "optim/optimizer.h"

namespace scalelab::optim {

class Sgd final : public Optimizer {
 public:
  explicit Sgd(const OptimizerOptions& options);
  [[nodiscard]] std::string name() const override { return "sgd"; }
  void step(nn::ParameterSet& params, float lr) override;

 protected:
  [[nodiscard]] std::vector<std::string> state_names() const override;
};

}  // namespace scalelab::optim
