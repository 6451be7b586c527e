// What `scalelab train` is asked to do (TrainConfig) and what it reports per epoch (EpochRecord).
// The trainer (train/trainer.h) reads the config and checks it (TrainConfig::validate); the
// scalelab commands fill it from their shared training options (apps/scalelab/train_options.h). Records are what --json writes (docs/results-schema.md,
// "scalelab.train").
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "data/load.h"
#include "nn/step_plan.h"
#include "optim/optimizer.h"
#include "train/algorithm_choice.h"

namespace scalelab::train {

// Every field either must agree across ranks or is per-rank: train/config_check.cpp lists which.
struct TrainConfig {
  std::string model = "cnn";
  std::string device = "cpu";         // where the engine computes: cpu or cuda (train/engine.h)
  std::string cuda_graphs = "on";     // cuda: replay each training step as one captured CUDA graph (on|off)
  // What the engine computes in: fp32 (float32; cuDNN's convolutions may use TF32 tensor cores, as
  // PyTorch's default), tf32 (matrix products on TF32 too), bf16 or fp16 (cuda: activations and
  // products in 16 bits, float32 master weights, gradients and optimizer; fp16 with dynamic loss
  // scaling). The CPU engine computes in fp32 only.
  std::string precision = "fp32";
  data::DatasetSpec dataset;          // name, data_dir, seed for synthetic; augment, decode, crop for jpeg:DIR
  int epochs = 1;
  std::size_t batch_size = 128;       // per rank and per backward pass
  double lr = 0.001;
  std::string optimizer = "adam";
  optim::OptimizerOptions optimizer_options;
  int threads = 1;                    // compute threads per rank
  std::size_t max_steps = 0;          // cap on optimizer steps per epoch; 0: the whole shard
  std::uint64_t seed = 42;            // model initialisation, shuffling, dropout
  std::string checkpoint;             // rank 0 writes it after every epoch; empty: none
  std::string resume;                 // a checkpoint to continue from; empty: start afresh
  std::string timeline;               // Chrome trace JSON of every step; empty: none
  std::string algo = "library";       // allreduce algorithm for the gradients (collectives/), or auto
  // algo "auto" on CPU ranks: prices the algorithms for a bucket size (train/algorithm_choice.h);
  // the scalelab command sets it from the calibration profile. Not part of the saved config.
  collectives::Chooser choose_algorithm;
  std::size_t bucket_cap_bytes = nn::kDefaultBucketCapBytes;  // float32 gradient bytes per allreduce bucket (nn/step_plan.h); 0: one per tensor
  bool fp16_allreduce = false;        // compress gradients to float16 on the wire
  // cpu: average gradients on a communication thread while backward runs (train/overlapped_averager.h):
  // on, off, or auto (on where the rank has a core to spare for it); cuda always overlaps (NCCL's stream)
  std::string overlap = "auto";
  int backward_passes_per_step = 1;   // micro-batches accumulated locally per optimizer step
  int loader_workers = 1;             // data loader threads per rank (with jpeg:DIR, the decoding threads)
  bool synthetic_data = false;        // the first batch's samples prepared once and reused: no input pipeline
  int prefetch = 2;                   // batches prepared ahead
  bool evaluate = true;               // test-set evaluation after every epoch
  std::size_t throughput_skip = 5;    // steps excluded from images/sec at the start of each epoch
  bool verbose = true;                // rank 0 prints progress lines
  double progress_interval_s = 5;     // between progress lines when the output is not a terminal
  double stall_timeout_s = 300;       // end this rank after so long without a finished step; 0: never

  // Checks every field that needs no data and no other rank: model and optimizer known, device
  // cpu or cuda, cuda_graphs on or off, precision known (fp32 on cpu), counts at least 1, lr positive and finite, the optimizer's options in range
  // (optim::OptimizerOptions::validate), the allreduce algorithm known. Throws a usage error
  // naming the field as written here ("batch_size"; core/error.h). The Trainer calls it; a front
  // end calls it too, to report a typo before it starts anything.
  void validate() const;
};

struct EpochRecord {
  int epoch = 0;                      // 1-based
  double loss = 0;                    // training loss, mean over every rank's samples
  double accuracy = 0;
  double test_loss = -1;              // -1 when not evaluated
  double test_accuracy = -1;
  double images_per_second = 0;       // all ranks together, first steps excluded (see timed_steps)
  double seconds = 0;                 // this epoch's wall time, evaluation excluded
  double eval_seconds = 0;
  double wall_seconds = 0;            // since training started, at the end of this epoch
  std::size_t steps = 0;              // optimizer steps in this epoch
  std::size_t timed_steps = 0;        // steps that images_per_second is measured over
  double step_ms = 0;                 // mean wall time per optimizer step
  double data_wait_seconds = 0;       // rank 0's time blocked on the loader
  std::size_t skipped_samples = 0;    // bad samples replaced this epoch, all ranks (--on-bad-sample skip)
  std::size_t skipped_steps = 0;      // optimizer steps skipped this epoch: fp16 gradients overflowed (loss scaling)
  double allreduce_seconds = 0;       // rank 0's time in gradient averaging
  double lr = 0;                      // the learning rate of the epoch's last step
  int ranks = 1;
  std::size_t batch_per_rank = 0;
  std::size_t global_batch = 0;       // batch_per_rank * ranks * backward_passes_per_step
  std::int64_t global_step = 0;       // optimizer steps since the start (resume included)
  double peak_rss_mib = 0;            // the largest peak resident memory over the ranks
};

void to_json(nlohmann::json& j, const EpochRecord& r);
[[nodiscard]] nlohmann::json config_json(const TrainConfig& c);

}  // namespace scalelab::train
