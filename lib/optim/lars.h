// LARS: layer-wise adaptive rate scaling (You, Gitman, Ginsburg 2017), SGD with momentum whose
// step for each parameter tensor (layer) is scaled by a trust ratio
//     trust = eta * ||w|| / (||g|| + weight_decay * ||w||)      (1 when ||w|| or ||g|| is 0)
//     v <- momentum * v + lr * trust * (g + weight_decay * w);   w <- w - v    (v starts at 0)
// eta is OptimizerOptions::trust_coefficient. With exclude_bias_and_norm (the default), biases and
// normalisation parameters (BatchNorm scale and shift) are excluded as usual: plain momentum SGD
// with trust 1 and no weight decay. lars_update() is the per-tensor kernel (tested against steps
// computed by hand); Lars applies it to every tensor of a ParameterSet. Made by name "lars".
#pragma once
#include <span>

#include "optim/optimizer.h"

namespace scalelab::optim {

// One step on one tensor. `adapt` false: an excluded tensor (no trust ratio, no weight decay).
// Returns the trust ratio applied. Allocates nothing.
float lars_update(std::span<float> w, std::span<const float> g, std::span<float> velocity, float lr,
                  const OptimizerOptions& options, bool adapt);

// Whether LARS/LAMB adapt (trust ratio, weight decay) a parameter of this kind.
[[nodiscard]] bool layerwise_adapts(nn::ParamKind kind, const OptimizerOptions& options);

class Lars final : public Optimizer {
 public:
  explicit Lars(const OptimizerOptions& options);
  [[nodiscard]] std::string name() const override { return "lars"; }
  void step(nn::ParameterSet& params, float lr) override;
  // The trust ratio each tensor got at the last step (1 for excluded tensors), for diagnostics.
  [[nodiscard]] std::span<const float> last_trust_ratios() const { return trust_; }

 protected:
  [[nodiscard]] std::vector<std::string> state_names() const override { return {"momentum_buffer"}; }

 private:
  std::vector<float> trust_;
};

}  // namespace scalelab::optim
