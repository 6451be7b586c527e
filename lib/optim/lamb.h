// LAMB: layer-wise adaptive moments (You et al. 2019). Adam's moments with bias correction,
// decoupled weight decay, and a per-tensor trust ratio on the resulting update (step t from 1):
//     m <- b1 m + (1-b1) g;   v <- b2 v + (1-b2) g^2;   m^ = m/(1-b1^t);   v^ = v/(1-b2^t)
//     r = m^ / (sqrt(v^) + eps) + weight_decay * w
//     trust = ||w|| / ||r||   (1 when ||w|| or ||r|| is 0);   w <- w - lr * trust * r
// With exclude_bias_and_norm (the default) biases and normalisation parameters are excluded as
// usual: trust 1 and no weight decay (an Adam step). eps is OptimizerOptions::eps (LAMB usually
// takes 1e-6). lamb_update() is the per-tensor kernel (tested against steps computed by hand);
// Lamb applies it to every tensor of a ParameterSet. Made by name "lamb".
#pragma once
#include <cstdint>
#include <span>

#include "optim/optimizer.h"

namespace scalelab::optim {

// Step number `t` (from 1) on one tensor; `adapt` false: an excluded tensor. Returns the trust
// ratio applied. Two passes over the tensor (the norm of r, then the update), so no scratch buffer.
float lamb_update(std::span<float> w, std::span<const float> g, std::span<float> m, std::span<float> v,
                  std::int64_t t, float lr, const OptimizerOptions& options, bool adapt);

class Lamb final : public Optimizer {
 public:
  explicit Lamb(const OptimizerOptions& options);
  [[nodiscard]] std::string name() const override { return "lamb"; }
  void step(nn::ParameterSet& params, float lr) override;
  [[nodiscard]] std::span<const float> last_trust_ratios() const { return trust_; }

 protected:
  [[nodiscard]] std::vector<std::string> state_names() const override { return {"exp_avg", "exp_avg_sq"}; }

 private:
  std::vector<float> trust_;
};

}  // namespace scalelab::optim
