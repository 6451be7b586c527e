// CpuEngine (train/engine_cpu.h): the host model, optimizer and averager behind the engine seam.
#include "train/engine_cpu.h"

#include "train/sync_batchnorm.h"

#include "nn/loss.h"
#include "optim/factory.h"

namespace scalelab::train {

CpuEngine::CpuEngine(const TrainConfig& config, comm::Communicator& comm, const nn::Shape& sample_shape,
                     std::size_t classes)
    : sample_(sample_shape) {
  model_ = nn::make_model(config.model, sample_shape, classes, config.seed);
  model_->reseed(config.seed, static_cast<std::uint64_t>(comm.rank()));  // ranks drop different units
  model_->reserve(config.batch_size);
  optimizer_ = optim::make_optimizer(config.optimizer, config.optimizer_options);
  optimizer_->bind(model_->parameters());
  averager_ = std::make_unique<GradientAverager>(comm, config.algo, make_step_plan(config, model_->parameters()));
  dlogits_.resize(nn::Shape{config.batch_size, classes});
}

void CpuEngine::forward(const float* images, std::size_t n, bool training) {
  logits_ = model_->forward({images, sample_.with_batch(n)}, training);
}

void CpuEngine::backward(const std::int32_t* labels, std::size_t n, float grad_scale, bool /*last_pass*/) {
  const nn::TensorView dlogits{dlogits_.data(), nn::Shape{n, model_->num_classes()}};
  const nn::LossResult r =
      nn::softmax_cross_entropy(logits_, std::span<const std::int32_t>(labels, n), dlogits, grad_scale);
  model_->backward(dlogits);
  train_.loss_sum += r.loss * static_cast<double>(n);
  train_.correct += static_cast<double>(r.correct);
  train_.samples += static_cast<double>(n);
}

void CpuEngine::evaluate(const float* images, const std::int32_t* labels, std::size_t n) {
  const nn::ConstTensorView logits = model_->forward({images, sample_.with_batch(n)}, false);
  const nn::LossResult r = nn::softmax_cross_entropy(logits, std::span<const std::int32_t>(labels, n));
  eval_.loss_sum += r.loss * static_cast<double>(n);
  eval_.correct += static_cast<double>(r.correct);
  eval_.samples += static_cast<double>(n);
}

void CpuEngine::enable_sync_batchnorm(comm::Communicator& comm) { train::enable_sync_batchnorm(*model_, comm); }

}  // namespace scalelab::train
