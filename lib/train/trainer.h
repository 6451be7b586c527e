// The data-parallel trainer: Horovod's recipe, each step visible in one place.
//   1. every rank loads the dataset and builds the model by name (nn/model.h) with the same seed;
//   2. require_same_model, then broadcast_from_rank0 (parameters, running statistics, optimizer
//      state; after --resume, rank 0's checkpoint) (train/replicate.h);
//   3. each epoch, the ShardedSampler gives this rank its shard and the BatchLoader prefetches it
//      (data/); each step runs backward_passes_per_step micro-batches of forward + backward,
//      accumulating gradients, then the gradients are averaged across ranks and the optimizer
//      steps with the lr of this global step; a loss that turned NaN or infinite stops every rank
//      at that step (train/divergence.h);
//   4. after each epoch: metrics averaged over ranks, test-set evaluation (sharded, reduced),
//      rank 0 prints the Keras line and images/sec, writes the checkpoint and the records.
// The arithmetic of steps 3 and 4 (forward, backward, averaging, optimizer, evaluation) is the
// engine's (train/engine.h): the CPU engine (nn/, optim/, GradientAverager) or the CUDA one, chosen
// by config.device; this loop is the same for both.
// Hooks for callers (scalelab converge, the labs): a per-step learning-rate function, a per-epoch
// callback, and the (host) model and optimizer themselves (built in the constructor, before run();
// after run() they hold the trained values whatever the device).
//
//   Trainer t(config, comm);
//   t.set_lr_schedule([&](long step) { return schedule.lr(step); });
//   TrainResult r = t.run();
#pragma once
#include <functional>
#include <memory>
#include <vector>

#include "comm/communicator.h"
#include "data/dataset.h"
#include "nn/model.h"
#include "optim/optimizer.h"
#include "train/config.h"
#include "train/engine.h"

namespace scalelab::train {

struct TrainResult {
  std::vector<EpochRecord> epochs;  // the epochs this run trained (after --resume, the new ones)
  double seconds = 0;
  std::size_t parameters = 0;
  std::size_t steps_per_epoch = 0;
  std::string averaging;            // Engine::averaging()
  std::string execution;            // Engine::execution(): empty for the CPU engine
  std::string precision;            // Engine::precision()
  std::string device;               // Engine::device()
};

class CheckpointLock;  // train/checkpoint.h

class Trainer {
 public:
  // Loads the data and builds the engine with its model and optimizer (no communication yet).
  // Usage errors for bad configurations: batch 0, more ranks than samples, a batch larger than a
  // rank's shard; --device cuda without a usable GPU for this rank is a runtime error.
  Trainer(TrainConfig config, comm::Communicator& comm);
  ~Trainer();
  Trainer(const Trainer&) = delete;
  Trainer& operator=(const Trainer&) = delete;

  // lr for global optimizer step t (0-based, counted across epochs and resumes). Default: config.lr.
  void set_lr_schedule(std::function<double(long step)> lr_at) { lr_at_ = std::move(lr_at); }
  // Called on every rank after each epoch with the (rank-averaged) record.
  void set_epoch_callback(std::function<void(const EpochRecord&)> cb) { on_epoch_ = std::move(cb); }
  // Lines printed by rank 0 before training (e.g. the learning-rate schedule).
  void add_preamble(const std::string& text) { preamble_ += text; }

  [[nodiscard]] nn::Model& model() { return engine_->model(); }
  // SyncBatchNorm over this trainer's ranks (every rank, before run()): Engine::enable_sync_batchnorm.
  // A model without BatchNorm is a usage error (the option would change nothing).
  void enable_sync_batchnorm();
  [[nodiscard]] optim::Optimizer& optimizer() { return engine_->optimizer(); }
  [[nodiscard]] const TrainConfig& config() const { return config_; }
  [[nodiscard]] std::string device() const { return engine_->device(); }
  [[nodiscard]] std::size_t steps_per_epoch() const { return steps_per_epoch_; }
  [[nodiscard]] std::size_t global_batch() const;
  [[nodiscard]] const data::Dataset& train_set() const { return *train_; }

  // Collective: every rank calls it. Returns the records (on every rank).
  TrainResult run();

 private:
  [[nodiscard]] std::pair<double, double> evaluate(std::vector<float>& images, std::vector<std::int32_t>& labels);
  [[nodiscard]] std::size_t test_skipped() const { return test_ ? test_->skipped_samples() : 0; }
  TrainConfig config_;
  comm::Communicator& comm_;
  std::unique_ptr<data::Dataset> train_;
  std::unique_ptr<data::Dataset> test_;  // null when training without evaluation on a set without one
  std::unique_ptr<Engine> engine_;
  std::unique_ptr<CheckpointLock> checkpoint_lock_;  // rank 0's, for the job's life
  std::size_t steps_per_epoch_ = 0;
  std::function<double(long)> lr_at_;
  std::function<void(const EpochRecord&)> on_epoch_;
  std::string preamble_;
  std::vector<std::size_t> test_shard_;  // this rank's exact share of the test set
};

// Peak resident memory of this process so far, MiB (getrusage).
[[nodiscard]] double peak_rss_mib();

}  // namespace scalelab::train
