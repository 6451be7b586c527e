// scalelab's public API, the optimizers: an optimizer bound to a model (sgd, adam, lars, lamb),
// and Horovod's DistributedOptimizer around it, which averages the gradients over all ranks
// before every step (in fused buckets; optionally float16 on the wire; optionally accumulating
// several backward passes per step).
//
//   scalelab::Optimizer sgd(model, "sgd", {.momentum = 0.9f});
//   scalelab::DistributedOptimizer optimizer(sgd, {.backward_passes_per_step = 2});
//   model.train_batch(batch, optimizer.gradient_scale());
//   if (optimizer.step(lr)) { /* the step was taken: every rank now holds the same parameters */ }
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace scalelab {

class Model;
namespace optim { class Optimizer; }
namespace train { class GradientAverager; }

// PyTorch's defaults; each optimizer uses the fields it needs.
struct OptimizerOptions {
  float momentum = 0.9f;      // sgd, lars
  bool nesterov = false;      // sgd, lars
  float weight_decay = 0.0f;  // all
  float beta1 = 0.9f;         // adam, lamb
  float beta2 = 0.999f;       // adam, lamb
  float eps = 1e-8f;          // adam, lamb
};

class Optimizer {
 public:
  // `name` is one of optimizer_names(); bad options throw ApiError naming the field.
  Optimizer(Model& model, const std::string& name, const OptimizerOptions& options = {});
  ~Optimizer();
  Optimizer(const Optimizer&) = delete;
  Optimizer& operator=(const Optimizer&) = delete;

  // Updates the model's parameters from its gradients with learning rate `lr`, then zeroes the
  // gradients.
  void step(float lr);
  [[nodiscard]] std::string name() const;
  [[nodiscard]] std::int64_t step_count() const;
  [[nodiscard]] std::span<const float> state() const;
  [[nodiscard]] Model& model() { return model_; }

  [[nodiscard]] optim::Optimizer& impl() { return *impl_; }
  [[nodiscard]] const optim::Optimizer& impl() const { return *impl_; }

 private:
  Model& model_;
  std::unique_ptr<optim::Optimizer> impl_;
};

[[nodiscard]] std::vector<std::string> optimizer_names();

struct DistributedOptions {
  int backward_passes_per_step = 1;             // batches accumulated before averaging and stepping
  bool fp16_wire = false;                       // gradients travel as float16 (Horovod's Compression.fp16)
  std::size_t bucket_cap_bytes = 64u << 20;     // fusion buffer; 0: one allreduce per tensor
  std::string algorithm = "ring";               // the allreduce: ring, tree, recursive-doubling, ...
};

class DistributedOptimizer {
 public:
  // Needs a live Runtime; bad options throw ApiError naming the field.
  DistributedOptimizer(Optimizer& optimizer, const DistributedOptions& options = {});
  ~DistributedOptimizer();
  DistributedOptimizer(const DistributedOptimizer&) = delete;
  DistributedOptimizer& operator=(const DistributedOptimizer&) = delete;

  // Collective. Call once after every backward pass (train_batch). Every
  // backward_passes_per_step-th call averages the gradients over all ranks and takes the step
  // (returns true); the calls between only count (false), the gradients keep accumulating.
  bool step(float lr);
  // 1 / backward_passes_per_step: pass it to train_batch so that the accumulated gradient is the
  // mean over the batches.
  [[nodiscard]] float gradient_scale() const;
  // "ring allreduce, 1 bucket of <= 64 MiB (0.9 MiB), float32 on the wire"
  [[nodiscard]] std::string describe() const;
  [[nodiscard]] Optimizer& optimizer() { return optimizer_; }

 private:
  Optimizer& optimizer_;
  int passes_per_step_;
  int passes_ = 0;
  std::unique_ptr<train::GradientAverager> averager_;
};

}  // namespace scalelab
