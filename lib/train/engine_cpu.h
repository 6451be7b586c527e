// CpuEngine: the engine (train/engine.h) on this rank's CPU cores: nn::Model's layers, the host
// optimizer (optim/) and the gradient buckets' allreduce over the communicator, all working on
// the host ParameterSet itself (load_from_host/store_to_host have nothing to copy). The buckets
// are averaged either after backward (GradientAverager) or on a communication thread while
// backward runs (OverlappedAverager): config.overlap, where "auto" overlaps when the node has a
// core for the thread besides every rank's compute threads, and SyncBatchNorm (whose exchanges
// run during backward) turns overlap off. averaging() says which and why.
// Built by make_engine for --device cpu; every buffer is allocated in the constructor.
#pragma once
#include <memory>

#include "train/engine.h"
#include "train/gradient_averager.h"
#include "train/overlapped_averager.h"

namespace scalelab::train {

class CpuEngine final : public Engine {
 public:
  CpuEngine(const TrainConfig& config, comm::Communicator& comm, const nn::Shape& sample_shape, std::size_t classes);
  ~CpuEngine() override;
  CpuEngine(const CpuEngine&) = delete;
  CpuEngine& operator=(const CpuEngine&) = delete;

  [[nodiscard]] std::string device() const override { return "cpu"; }
  [[nodiscard]] std::string averaging() const override;
  [[nodiscard]] nn::Model& model() override { return *model_; }
  [[nodiscard]] optim::Optimizer& optimizer() override { return *optimizer_; }
  void load_from_host() override {}
  void store_to_host() override {}
  void skip_random(std::uint64_t forwards) override { model_->skip_random(forwards); }
  void zero_grad() override { model_->zero_grad(); }
  void forward(const float* images, std::size_t n, bool training) override;
  void backward(const std::int32_t* labels, std::size_t n, float grad_scale, bool last_pass) override;
  void average_gradients() override;
  [[nodiscard]] std::vector<std::pair<double, double>> allreduce_spans() const override;
  void step(float lr) override { optimizer_->step(model_->parameters(), lr); }
  void evaluate(const float* images, const std::int32_t* labels, std::size_t n) override;
  [[nodiscard]] Tally train_tally() override { return train_; }
  [[nodiscard]] Tally peek_train_tally() override { return train_; }
  [[nodiscard]] Tally eval_tally() override { return eval_; }
  void reset_tallies() override { train_ = eval_ = Tally{}; }
  void enable_sync_batchnorm(comm::Communicator& comm) override;

 private:
  comm::Communicator& comm_;
  unsigned char* shared_grads_ = nullptr;  // the gradients' shared buffer (algo shm), given back at the end
  nn::Shape sample_;
  std::unique_ptr<nn::Model> model_;
  std::unique_ptr<optim::Optimizer> optimizer_;
  std::string algo_;        // the gradient allreduce's algorithm ("auto" resolved)
  std::string algo_words_;  // how auto chose it; empty when named
  std::unique_ptr<GradientAverager> averager_;     // overlap off: after backward
  std::unique_ptr<OverlappedAverager> overlapped_;  // overlap on: during backward
  std::string overlap_words_;                       // why not overlapped, for averaging()
  nn::Tensor dlogits_;
  nn::ConstTensorView logits_;  // of the last forward
  Tally train_, eval_;
};

}  // namespace scalelab::train
