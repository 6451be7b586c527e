// CpuEngine (train/engine_cpu.h): the host model, optimizer and averager behind the engine seam.
#include "train/engine_cpu.h"

#include <fmt/format.h>

#include <algorithm>
#include <thread>

#include "collectives/algorithm.h"
#include "comm/mpi_runtime.h"
#include "core/error.h"
#include "core/overlap_rule.h"
#include "nn/loss.h"
#include "optim/factory.h"
#include "train/sync_batchnorm.h"

namespace scalelab::train {

namespace {

// "" when this rank averages on a communication thread; else the reason it does not, in words.
std::string why_not_overlapped(const TrainConfig& c, comm::Communicator& comm) {
  if (comm.size() == 1) return "one rank: nothing to average";
  if (c.overlap == "off") return "after backward (overlap off)";
  if (comm.backend() == "mpi" && !comm::mpi_serialized_threads()) {
    if (c.overlap == "on") {
      throw_parameter(ErrorKind::usage, "overlap",
                      std::string("on: the MPI library provides ") + comm::mpi_thread_level_name() +
                          ", and a communication thread needs MPI_THREAD_SERIALIZED; use off");
    }
    return std::string("after backward (the MPI library provides ") + comm::mpi_thread_level_name() + ")";
  }
  if (c.overlap == "on") return "";
  // auto: a core for the thread besides every local rank's compute threads.
  const unsigned cores = std::thread::hardware_concurrency();
  if (overlap_fits(cores, comm.local_size(), c.threads)) return "";
  return fmt::format("after backward ({} cores for {} rank{} of {} compute thread{} leave none for a communication "
                     "thread; overlap on uses one anyway)",
                     cores, comm.local_size(), comm.local_size() == 1 ? "" : "s", c.threads, c.threads == 1 ? "" : "s");
}

}  // namespace

CpuEngine::CpuEngine(const TrainConfig& config, comm::Communicator& comm, const nn::Shape& sample_shape,
                     std::size_t classes)
    : comm_(comm), sample_(sample_shape) {
  model_ = nn::make_model(config.model, sample_shape, classes, config.seed);
  model_->reseed(config.seed, static_cast<std::uint64_t>(comm.rank()));  // ranks drop different units
  model_->reserve(config.batch_size);
  optimizer_ = optim::make_optimizer(config.optimizer, config.optimizer_options);
  optimizer_->bind(model_->parameters());
  nn::StepPlan plan = make_step_plan(config, model_->parameters());
  algo_ = config.algo;
  // Gradients go into node memory below for an algorithm that reads it in place, unless they
  // travel as float16 (converted into a buffer of the averager's own).
  const bool shared_grads = comm.size() > 1 && !config.fp16_allreduce;
  if (algo_ == "auto") {
    const AlgorithmChoice choice = choose_allreduce(comm, static_cast<double>(plan.largest_count() * sizeof(float)),
                                                    shared_grads, config.choose_algorithm);
    algo_ = choice.algorithm;
    algo_words_ = choice.words;
  }
  // An algorithm that reads shared buffers in place (shm) gets the gradients in node memory: no
  // copy into its staging memory per bucket. Collective: every rank has the same algorithm.
  if (shared_grads &&
      collectives::find_algorithm(collectives::Collective::allreduce, algo_).cost_shared != nullptr) {
    nn::ParameterSet& params = model_->parameters();
    if (unsigned char* memory = comm.shared_buffer(std::max<std::size_t>(params.size(), 1) * sizeof(float))) {
      params.place_grads(reinterpret_cast<float*>(memory));
      shared_grads_ = memory;
      algo_words_ += std::string(algo_words_.empty() ? "" : "; ") + "gradients in node memory, read in place";
    }
  }
  overlap_words_ = why_not_overlapped(config, comm);
  if (overlap_words_.empty()) {
    overlapped_ = std::make_unique<OverlappedAverager>(comm, algo_, std::move(plan), model_->parameters().grads());
  } else {
    averager_ = std::make_unique<GradientAverager>(comm, algo_, std::move(plan));
  }
  dlogits_.resize(nn::Shape{config.batch_size, classes});
}

// The averagers go first (the overlapped one joins its thread); then the buffer is given back
// for the next engine on this communicator (converge builds one per run).
CpuEngine::~CpuEngine() {
  overlapped_.reset();
  averager_.reset();
  if (shared_grads_ != nullptr) comm_.release_shared_buffer(shared_grads_);
}

void CpuEngine::forward(const float* images, std::size_t n, bool training) {
  logits_ = model_->forward({images, sample_.with_batch(n)}, training);
}

void CpuEngine::backward(const std::int32_t* labels, std::size_t n, float grad_scale, bool last_pass) {
  const nn::TensorView dlogits{dlogits_.data(), nn::Shape{n, model_->num_classes()}};
  const nn::LossResult r =
      nn::softmax_cross_entropy(logits_, std::span<const std::int32_t>(labels, n), dlogits, grad_scale);
  if (overlapped_ && last_pass) {
    model_->backward(dlogits, [this](std::size_t p) { overlapped_->param_ready(p); });
  } else {
    model_->backward(dlogits);
  }
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

void CpuEngine::average_gradients() {
  if (overlapped_) overlapped_->finish();
  else averager_->average(model_->parameters().grads());
}

std::vector<std::pair<double, double>> CpuEngine::allreduce_spans() const {
  return overlapped_ ? overlapped_->last_spans() : std::vector<std::pair<double, double>>{};
}

std::string CpuEngine::averaging() const {
  const std::string chosen = algo_words_.empty() ? "" : " (" + algo_words_ + ")";
  return (overlapped_ ? overlapped_->describe() : averager_->describe() + ", " + overlap_words_) + chosen;
}

void CpuEngine::enable_sync_batchnorm(comm::Communicator& comm) {
  train::enable_sync_batchnorm(*model_, comm);
  // Its exchanges run during backward, where the communication thread would call MPI too.
  if (overlapped_) {
    averager_ = std::make_unique<GradientAverager>(comm, algo_, overlapped_->plan());
    overlapped_.reset();
    overlap_words_ = "after backward (SyncBatchNorm exchanges statistics during backward)";
  }
}

}  // namespace scalelab::train
