// Engine: where the trainer's one loop (train/trainer.cpp) runs its arithmetic. The loop owns the
// data, the schedule, the records and every collective that is not gradient averaging; the engine
// owns the model, the optimizer and their buffers (host memory for the CPU engine, device memory
// for the CUDA one) and the gradient averaging. Chosen with --device cpu|cuda (TrainConfig::device).
//
// The host model and optimizer (model(), optimizer()) always exist: they give the parameter layout
// and hold the host copies that rank 0 broadcasts, that checkpoints save and load and that the
// consistency check compares. For the CPU engine they ARE the working copies; an engine on a device
// copies them in with load_from_host() and back with store_to_host().
//
// One optimizer step of the loop:
//   engine.zero_grad();
//   for each of k micro-batches: engine.forward(images, n, true);
//                                engine.backward(labels, n, 1/k, /*last_pass=*/i == k-1);
//   engine.average_gradients();  engine.step(lr);
// forward/backward may return before the work is done (a device queues it, or, replaying steps as
// CUDA graphs, defers it to step()); train_tally() and store_to_host() wait for it. Nothing may
// read the gradients or the tally between a step's first forward and its step().
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "comm/communicator.h"
#include "nn/model.h"
#include "nn/step_plan.h"
#include "optim/optimizer.h"
#include "train/config.h"

namespace scalelab::train {

// Sums over the samples seen since the last reset: loss * n, correct predictions, n.
struct Tally {
  double loss_sum = 0;
  double correct = 0;
  double samples = 0;
};

class Engine {
 public:
  virtual ~Engine() = default;
  // "cpu" or "cuda:0 (NVIDIA H100 80GB HBM3)", for the start-up lines and --json.
  [[nodiscard]] virtual std::string device() const = 0;
  // The gradient averaging in words ("ring allreduce, 1 chunk of <= 64 MiB, float32").
  [[nodiscard]] virtual std::string averaging() const = 0;
  // How training steps are executed, in words, where there is a choice (the CUDA engine: "one CUDA
  // graph per step ..." or why not); empty for the CPU engine.
  [[nodiscard]] virtual std::string execution() const { return {}; }
  // What the arithmetic is in, in words (TrainConfig::precision; "fp32: ...").
  [[nodiscard]] virtual std::string precision() const { return "fp32: float32"; }
  // Optimizer steps skipped since the engine was made because the gradients overflowed (fp16's
  // dynamic loss scaling; waits for queued work); 0 where nothing is skipped.
  [[nodiscard]] virtual std::uint64_t skipped_steps() { return 0; }
  [[nodiscard]] virtual nn::Model& model() = 0;
  [[nodiscard]] virtual optim::Optimizer& optimizer() = 0;

  // The host copies (parameters, running statistics, optimizer state and step count) changed:
  // copy them to where the engine computes. The CPU engine computes on them: nothing to do.
  virtual void load_from_host() = 0;
  // Copy what the engine computed back into the host copies (before a checkpoint, at the end).
  virtual void store_to_host() = 0;
  // The model's random streams (Dropout's, per rank) moved on as `forwards` training forwards
  // since the start would have: after --resume, the masks continue where the checkpointed run's
  // stood, so a resumed run equals an uninterrupted one.
  virtual void skip_random(std::uint64_t forwards) = 0;

  virtual void zero_grad() = 0;
  // Forward of n samples (NCHW floats in host memory, valid until backward returns).
  virtual void forward(const float* images, std::size_t n, bool training) = 0;
  // Loss of the last training forward against `labels`, added to the training tally, and backward,
  // ACCUMULATING gradients scaled by grad_scale. last_pass: the last micro-batch of this step, after
  // which each gradient is final (an engine may start averaging it then).
  virtual void backward(const std::int32_t* labels, std::size_t n, float grad_scale, bool last_pass) = 0;
  // Collective: every rank's gradients replaced by their mean over all ranks.
  virtual void average_gradients() = 0;
  // Where the engine averages on a thread of its own while backward runs (the CPU engine with
  // overlap on): each gradient bucket's allreduce in the last step, [begin, end) in
  // core/timer.h's now_seconds(), for the timeline. Empty otherwise.
  [[nodiscard]] virtual std::vector<std::pair<double, double>> allreduce_spans() const { return {}; }
  virtual void step(float lr) = 0;
  // Evaluation forward of n samples and their loss, added to the evaluation tally.
  virtual void evaluate(const float* images, const std::int32_t* labels, std::size_t n) = 0;

  // The tallies so far (waiting for queued work), and their reset (both).
  [[nodiscard]] virtual Tally train_tally() = 0;
  // The training tally as of a recent step, without waiting (per-step progress lines). The CPU
  // engine's is exact; a device's may lag by a step or two.
  [[nodiscard]] virtual Tally peek_train_tally() { return train_tally(); }
  [[nodiscard]] virtual Tally eval_tally() = 0;
  virtual void reset_tallies() = 0;
  // SyncBatchNorm from now on (train/sync_batchnorm.h): every BatchNorm layer normalises with the
  // statistics of the global batch, summed over `comm`'s ranks (every rank calls it, before the
  // first step). One rank: nothing to exchange.
  virtual void enable_sync_batchnorm(comm::Communicator& comm) = 0;
};

// Builds the engine config.device names, with its model (config.model, seeded with config.seed,
// dropout streams per rank) reserved for config.batch_size, and its optimizer. "cuda" in a build
// without CUDA, or without a usable GPU for this rank, is one error line naming the cause.
[[nodiscard]] std::unique_ptr<Engine> make_engine(const TrainConfig& config, comm::Communicator& comm,
                                                  const nn::Shape& sample_shape, std::size_t classes);
// The CUDA engine (train/engine_cuda.h), or in a build without CUDA an error saying so: defined
// by engine_factory_cuda.cpp or engine_factory_none.cpp, whichever CMake compiled.
[[nodiscard]] std::unique_ptr<Engine> make_cuda_engine(const TrainConfig& config, comm::Communicator& comm,
                                                       const nn::Shape& sample_shape, std::size_t classes);
// One GPU per rank: `local_ranks` ranks on this node need that many of its `gpus` GPUs, else a
// usage error naming both counts (raised locally on every rank of the node, before any collective).
void check_one_gpu_per_rank(int local_ranks, int gpus);

// The gradient-averaging plan both engines execute (nn/step_plan.h), from the config's bucket
// cap, wire precision and backward passes per step.
[[nodiscard]] nn::StepPlan make_step_plan(const TrainConfig& config, const nn::ParameterSet& params);

}  // namespace scalelab::train
