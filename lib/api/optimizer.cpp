// The public API's optimizers (include/scalelab/optimizer.h) over lib/optim and lib/train's
// gradient averager.
#include <cmath>

#include "api/context.h"
#include "api/trace.h"
#include "nn/model.h"
#include "nn/step_plan.h"
#include "optim/factory.h"
#include "scalelab/model.h"
#include "scalelab/optimizer.h"
#include "train/gradient_averager.h"

namespace scalelab {

Optimizer::Optimizer(Model& model, const std::string& name, const OptimizerOptions& options) : model_(model) {
  impl_ = api::translated([&] {
    optim::OptimizerOptions o;
    o.momentum = options.momentum;
    o.nesterov = options.nesterov;
    o.weight_decay = options.weight_decay;
    o.beta1 = options.beta1;
    o.beta2 = options.beta2;
    o.eps = options.eps;
    auto opt = optim::make_optimizer(name, o);
    opt->bind(model.impl().parameters());
    return opt;
  });
}

Optimizer::~Optimizer() = default;

void Optimizer::step(float lr) {
  api::translated([&] {
    optim::Optimizer::check_lr(lr);
    impl_->step(model_.impl().parameters(), lr);
  });
  model_.zero_grad();
  if (api::tracing()) {
    api::trace("step", {{"step", impl_->step_count()}, {"lr", lr}});
    if (impl_->step_count() == 1) {
      api::trace("parameters", {{"when", "first_step"}, {"step", 1}, {"fingerprint", api::fingerprint_text(model_.fingerprint())}});
    }
  }
}

std::string Optimizer::name() const { return impl_->name(); }
std::int64_t Optimizer::step_count() const { return impl_->step_count(); }
std::span<const float> Optimizer::state() const { return impl_->state(); }

std::vector<std::string> optimizer_names() { return optim::optimizer_names(); }

DistributedOptimizer::DistributedOptimizer(Optimizer& optimizer, const DistributedOptions& options)
    : optimizer_(optimizer), passes_per_step_(options.backward_passes_per_step) {
  comm::Communicator& c = api::communicator("scalelab::DistributedOptimizer");
  averager_ = api::translated([&] {
    nn::StepPlan plan(optimizer.model().impl().parameters().params(),
                      {.bucket_cap_bytes = options.bucket_cap_bytes,
                       .fp16_wire = options.fp16_wire,
                       .backward_passes_per_step = options.backward_passes_per_step});
    return std::make_unique<train::GradientAverager>(c, options.algorithm, std::move(plan));
  });
}

DistributedOptimizer::~DistributedOptimizer() = default;

bool DistributedOptimizer::step(float lr) {
  if (++passes_ < passes_per_step_) return false;
  passes_ = 0;
  api::trace_enter("allreduce", "scalelab::DistributedOptimizer::step");
  api::translated([&] { averager_->average(optimizer_.model().impl().parameters().grads()); });
  if (api::tracing()) {
    const nn::StepPlan& plan = averager_->plan();
    api::trace("collective", {{"op", "allreduce"}, {"call", "scalelab::DistributedOptimizer::step"},
                              {"bytes", plan.wire_bytes()}, {"buckets", plan.size()},
                              {"wire", plan.options().fp16_wire ? "float16" : "float32"}});
  }
  optimizer_.step(lr);
  return true;
}

float DistributedOptimizer::gradient_scale() const { return 1.0f / static_cast<float>(passes_per_step_); }
std::string DistributedOptimizer::describe() const { return averager_->describe(); }

}  // namespace scalelab
