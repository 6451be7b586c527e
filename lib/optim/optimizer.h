// Optimizer: the interface every optimizer implements (SGD, Adam here; LARS, LAMB alongside).
// step(params, lr) updates params.values() from params.grads() with the learning rate of this
// step (schedules live outside the optimizer and pass lr per step). All the optimizer's state
// (momenta, moments) lives in ONE flat float buffer, state(), laid out like the parameter buffer
// (segment s of parameter i at segments()[s].offset + params.info(i).offset), plus the step count:
// the trainer broadcasts both from rank 0 and checkpoints them.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "nn/parameter.h"

namespace scalelab::optim {

// Options for every optimizer; each uses the fields it needs (defaults are PyTorch's).
struct OptimizerOptions {
  float momentum = 0.9f;        // SGD, LARS
  float dampening = 0.0f;       // SGD
  bool nesterov = false;        // SGD, LARS
  float weight_decay = 0.0f;    // all: L2 added to the gradient (decoupled for LAMB)
  float beta1 = 0.9f;           // Adam, LAMB
  float beta2 = 0.999f;         // Adam, LAMB
  float eps = 1e-8f;            // Adam (1e-6 is LAMB's usual value)
  float trust_coefficient = 0.001f;  // LARS eta
  bool exclude_bias_and_norm = true; // LARS/LAMB: no trust ratio or weight decay on biases/norms

  // Throws a usage error naming the field at fault (core/error.h): momentum outside [0, 1),
  // negative weight decay, betas outside [0, 1), eps or the trust coefficient not positive,
  // anything not finite, nesterov without momentum. Every optimizer's constructor calls it.
  void validate() const;
};

// A named slice of state(), e.g. {"exp_avg", 0, n}: one float per parameter float.
struct StateSegment {
  std::string name;
  std::size_t offset;
  std::size_t size;
};

class Optimizer {
 public:
  virtual ~Optimizer() = default;
  [[nodiscard]] virtual std::string name() const = 0;
  // Allocates the state for this parameter set if it is not allocated yet (step calls it too;
  // call it before broadcasting or loading state so that state() has its final size).
  void bind(const nn::ParameterSet& params);
  virtual void step(nn::ParameterSet& params, float lr) = 0;

  [[nodiscard]] std::span<float> state() { return {state_.data(), state_.size()}; }
  [[nodiscard]] std::span<const float> state() const { return {state_.data(), state_.size()}; }
  [[nodiscard]] const std::vector<StateSegment>& segments() const { return segments_; }
  // Steps taken so far (Adam's bias correction depends on it).
  [[nodiscard]] std::int64_t step_count() const { return steps_; }
  void set_step_count(std::int64_t n) { steps_ = n; }
  [[nodiscard]] const OptimizerOptions& options() const { return options_; }

 protected:
  explicit Optimizer(const OptimizerOptions& options) : options_(options) {}

 public:
  // Throws usage if lr is not a positive finite number (every engine's optimizers call it).
  static void check_lr(float lr);

 protected:
  // Names of the per-parameter-float state segments this optimizer keeps (may be empty).
  [[nodiscard]] virtual std::vector<std::string> state_names() const = 0;
  // Segment s of the state, as long as the parameter buffer.
  [[nodiscard]] float* segment(std::size_t s) { return state_.data() + segments_[s].offset; }
  OptimizerOptions options_;
  std::int64_t steps_ = 0;

 private:
  std::vector<float> state_;
  std::vector<StateSegment> segments_;
  std::size_t bound_size_ = static_cast<std::size_t>(-1);
};

}  // namespace scalelab::optim
