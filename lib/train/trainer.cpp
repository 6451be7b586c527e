// Trainer (train/trainer.h): the training loop. Everything it allocates is allocated before the
// first step; a step reuses the loader's batch buffers and the engine's activations, gradient
// buffer (reduced in place) and optimizer state.
#include "train/trainer.h"

#include <sys/resource.h>

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "comm/consistency.h"
#include "comm/watchdog.h"
#include "core/error.h"
#include "core/output_path.h"
#include "core/timer.h"
#include "data/loader.h"
#include "data/prepared.h"
#include "data/sampler.h"
#include "nn/compute.h"
#include "train/checkpoint.h"
#include "train/config_check.h"
#include "train/divergence.h"
#include "train/progress.h"
#include "train/replicate.h"
#include "train/timeline.h"

namespace scalelab::train {

double peak_rss_mib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB on Linux
}

namespace {

nn::Shape sample_shape(const data::Dataset& d) {
  const auto s = d.shape();
  return nn::Shape{static_cast<std::size_t>(s.channels), static_cast<std::size_t>(s.height),
                   static_cast<std::size_t>(s.width)};
}

}  // namespace

Trainer::Trainer(TrainConfig config, comm::Communicator& comm) : config_(std::move(config)), comm_(comm) {
  config_.validate();
  if (comm_.rank() == 0) {  // the writer checks its files now, not after the first epoch
    check_output_file("checkpoint", config_.checkpoint);
    check_output_file("timeline", config_.timeline);
    if (!config_.checkpoint.empty()) checkpoint_lock_ = std::make_unique<CheckpointLock>(config_.checkpoint);
  }
  nn::set_compute_threads(config_.threads);
  data::DatasetSpec dataset = config_.dataset;
  dataset.need_test = config_.evaluate;
  data::DatasetSplits splits = data::load_dataset(dataset);
  train_ = std::move(splits.train);
  test_ = std::move(splits.test);
  if (config_.synthetic_data) {  // the first global batch's worth of samples, prepared once
    const std::size_t global = config_.batch_size * static_cast<std::size_t>(config_.backward_passes_per_step) *
                               static_cast<std::size_t>(comm_.size());
    train_ = std::make_unique<data::PreparedDataset>(*train_, global);
  }
  // The sampler's own checks (more ranks than samples) come first.
  const data::ShardedSampler probe(train_->size(), comm_.size(), comm_.rank(), config_.seed, true);
  const std::size_t per_step = config_.batch_size * static_cast<std::size_t>(config_.backward_passes_per_step);
  steps_per_epoch_ = probe.samples_per_rank() / per_step;
  if (steps_per_epoch_ == 0) {
    throw_parameter(ErrorKind::usage, "batch_size",
                    fmt::format("{}: each of the {} ranks holds {} training samples, fewer than the {} one step "
                                "needs; use a smaller batch or fewer ranks",
                                config_.batch_size, comm_.size(), probe.samples_per_rank(), per_step));
  }
  if (config_.max_steps > 0) steps_per_epoch_ = std::min(steps_per_epoch_, config_.max_steps);
  const nn::Shape shape = sample_shape(*train_);
  try {
    engine_ = make_engine(config_, comm_, shape, static_cast<std::size_t>(train_->classes()));
  } catch (const Error& e) {
    // A layer that does not fit the samples (the model's shape errors name no parameter; the
    // engine's options do): a JPEG set's crop sets the input size, so it is the crop's problem;
    // otherwise the model's, for the data set's images.
    if (e.kind() != ErrorKind::usage || !e.parameter().empty()) throw;
    if (config_.dataset.name.rfind("jpeg:", 0) == 0) {
      throw_parameter(ErrorKind::usage, "crop",
                      fmt::format("{}: the model {} does not fit inputs of {}x{} ({}); give a larger crop (or a set of "
                                  "larger images)",
                                  config_.dataset.crop, config_.model, shape[1], shape[2], e.what()));
    }
    throw_parameter(ErrorKind::usage, "model",
                    fmt::format("{}: does not fit the {}x{} images of data set {} ({}); use --model mlp, which takes "
                                "any size, or a data set of larger images",
                                config_.model, shape.rank() > 1 ? shape[1] : 1, shape.rank() > 2 ? shape[2] : 1,
                                config_.dataset.name, e.what()));
  }
  if (test_) test_shard_ = data::ShardedSampler::exact_shard(test_->size(), comm_.size(), comm_.rank());
  lr_at_ = [lr = config_.lr](long) { return lr; };
}

void Trainer::enable_sync_batchnorm() {
  if (!engine_->model().uses_batch_statistics()) {
    throw_parameter(ErrorKind::usage, "sync_batchnorm",
                    ": the model " + config_.model + " has no BatchNorm, so there are no statistics to share; use "
                    "the resnet model, or leave it out");
  }
  engine_->enable_sync_batchnorm(comm_);
}

Trainer::~Trainer() = default;

std::size_t Trainer::global_batch() const {
  return config_.batch_size * static_cast<std::size_t>(comm_.size()) * static_cast<std::size_t>(config_.backward_passes_per_step);
}

// Test loss and accuracy over the whole test set: each rank evaluates its exact shard, then the
// sums are reduced, so every sample counts once whatever the rank count.
std::pair<double, double> Trainer::evaluate(std::vector<float>& images, std::vector<std::int32_t>& labels) {
  const std::size_t b = config_.batch_size;
  engine_->reset_tallies();
  for (std::size_t first = 0; first < test_shard_.size(); first += b) {
    const std::size_t n = std::min(b, test_shard_.size() - first);
    test_->fill(std::span(test_shard_).subspan(first, n), images.data(), labels.data());
    engine_->evaluate(images.data(), labels.data(), n);
  }
  const Tally t = engine_->eval_tally();
  double sums[3] = {t.loss_sum, t.correct, t.samples};
  comm_.allreduce(sums, sums, 3, comm::DataType::f64, comm::ReduceOp::sum);
  return {sums[0] / sums[2], sums[1] / sums[2]};
}

TrainResult Trainer::run() {
  const int rank = comm_.rank();
  const int ranks = comm_.size();
  comm::StallWatchdog watchdog(config_.stall_timeout_s, rank, ranks, "training");  // beat(): entering a phase
  nn::ParameterSet& params = engine_->model().parameters();
  optim::Optimizer& optimizer = engine_->optimizer();
  const std::size_t batch = config_.batch_size;
  const int passes = config_.backward_passes_per_step;
  const std::size_t steps = steps_per_epoch_;

  // Horovod's recipe, steps 1 and 2: same model everywhere, then rank 0's state everywhere.
  require_same_config(comm_, config_);  // the options first: a differing one is named, not a symptom
  require_same_model(comm_, params);
  comm::require_same(comm_, train_->size(), "dataset", "ranks loaded different numbers of training samples");
  comm::require_same(comm_, batch, "batch_size", "ranks disagree");
  comm::require_same(comm_, static_cast<std::uint64_t>(passes), "backward_passes_per_step", "ranks disagree");
  comm::require_same(comm_, steps, "max_steps", "ranks disagree on the steps per epoch");
  std::int64_t counters[3] = {0, 0, 0};  // epochs done, global step, training forwards per rank
  std::string resume_note;                // rank 0: the checkpoint came from another rank count or batch
  if (rank == 0 && !config_.resume.empty()) {
    const CheckpointMeta meta = load_checkpoint(config_.resume, config_.model, params, optimizer);
    if (meta.format >= 2 && meta.seed != config_.seed) {
      throw_parameter(ErrorKind::usage, "seed",
                      fmt::format("{}: {} was trained with seed {}; resume with the same seed (the data order and "
                                  "dropout masks continue from it)", config_.seed, config_.resume, meta.seed));
    }
    if (meta.ranks > 0 && (meta.ranks != comm_.size() || meta.global_batch != static_cast<std::int64_t>(global_batch()))) {
      resume_note = fmt::format(
          "  note: {} was written by {} rank{} at global batch {}; this run has {} at {}: the data order and the "
          "learning-rate schedule go on from a different run than the one saved",
          config_.resume, meta.ranks, meta.ranks == 1 ? "" : "s", meta.global_batch, comm_.size(), global_batch());
    }
    counters[0] = meta.counters.epochs_done;
    counters[1] = meta.counters.global_step;
    // A format-1 checkpoint did not record it: every step so far ran `passes` forwards.
    counters[2] = meta.counters.training_forwards >= 0 ? meta.counters.training_forwards : counters[1] * passes;
  }
  watchdog.beat("broadcast", counters[1]);
  broadcast_from_rank0(comm_, params, optimizer, counters, 3);
  if (counters[0] >= config_.epochs) {  // every rank has the counters now: every rank stops here
    throw_parameter(ErrorKind::usage, "epochs",
                    fmt::format("{}: {} already holds {} epoch{}; give a total above {} to train on", config_.epochs,
                                config_.resume, counters[0], counters[0] == 1 ? "" : "s", counters[0]));
  }
  engine_->load_from_host();
  engine_->skip_random(static_cast<std::uint64_t>(counters[2]));
  std::int64_t training_forwards = counters[2];

  data::ShardedSampler sampler(train_->size(), ranks, rank, config_.seed, true);
  data::BatchLoader loader(*train_, batch, config_.loader_workers, config_.prefetch);
  std::vector<float> eval_images(batch * sample_shape(*train_).numel());
  std::vector<std::int32_t> eval_labels(batch);
  const int epochs_left = config_.epochs - static_cast<int>(counters[0]);
  StepTimeline timeline(!config_.timeline.empty(), rank,
                        static_cast<std::size_t>(std::max(epochs_left, 0)) * (steps * (3 * static_cast<std::size_t>(passes) + 2) + 2) + 16);
  ProgressPrinter progress(rank == 0 && config_.verbose, stdout, config_.progress_interval_s);

  TrainResult result;
  result.parameters = params.size();
  result.steps_per_epoch = steps;
  result.averaging = engine_->averaging();
  result.execution = engine_->execution();
  result.precision = engine_->precision();
  result.device = engine_->device();
  if (rank == 0 && config_.verbose) {
    progress.line(fmt::format("scalelab train: {} ({} parameters) on {} ({} training, {} test samples)", config_.model,
                              params.size(), train_->name().substr(0, train_->name().rfind(' ')), train_->size(),
                              test_ ? std::to_string(test_->size()) : "no"));
    progress.line(fmt::format("  {} rank{} x batch {}{} = global batch {}; {} steps per epoch; {} lr {}; {} thread{} per rank",
                              ranks, ranks == 1 ? "" : "s", batch,
                              passes > 1 ? fmt::format(" x {} backward passes", passes) : "", global_batch(), steps,
                              config_.optimizer, config_.lr, config_.threads, config_.threads == 1 ? "" : "s"));
    if (config_.device != "cpu") progress.line("  device: " + engine_->device());
    if (!engine_->execution().empty()) progress.line("  steps: " + engine_->execution());
    if (config_.precision != "fp32") progress.line("  precision: " + engine_->precision());
    progress.line("  gradients: " + engine_->averaging());
    if (counters[0] > 0) {
      progress.line(fmt::format("  resumed from {}: {} epochs done, global step {}", config_.resume, counters[0], counters[1]));
      if (!resume_note.empty()) progress.line(resume_note);
    }
    if (!preamble_.empty()) progress.line(preamble_);
  }

  watchdog.beat("start barrier", counters[1]);
  comm_.barrier();
  DivergenceCheck divergence(comm_);
  const double t_start = now_seconds();
  timeline.start(t_start);
  std::int64_t global_step = counters[1];
  const float grad_scale = 1.0f / static_cast<float>(passes);
  const std::size_t skip = steps > 2 * config_.throughput_skip ? config_.throughput_skip : (steps > 1 ? 1 : 0);

  for (int epoch = static_cast<int>(counters[0]); epoch < config_.epochs; ++epoch) {
    sampler.set_epoch(static_cast<std::uint64_t>(epoch));
    const std::size_t skipped_before = train_->skipped_samples() + test_skipped();
    const std::uint64_t skipped_steps_before = engine_->skipped_steps();
    loader.start_epoch(sampler.indices(), steps * static_cast<std::size_t>(passes), static_cast<std::uint64_t>(epoch));
    (void)loader.take_wait_seconds();
    progress.begin_epoch(epoch + 1, config_.epochs, steps);
    const double epoch_t0 = now_seconds();
    double timed_t0 = epoch_t0;
    double allreduce_s = 0, lr_now = 0;
    engine_->reset_tallies();
    for (std::size_t s = 0; s < steps; ++s) {
      engine_->zero_grad();
      for (int k = 0; k < passes; ++k) {
        const double t0 = now_seconds();
        const data::Batch& b = loader.next();
        const double t1 = now_seconds();
        timeline.span(Phase::data_wait, t0, t1);
        engine_->forward(b.images, b.size, true);
        const double t2 = now_seconds();
        timeline.span(Phase::forward, t1, t2);
        engine_->backward(b.labels, b.size, grad_scale, k + 1 == passes);
        loader.release(b);
        timeline.span(Phase::backward, t2, now_seconds());
      }
      const double t3 = now_seconds();
      watchdog.beat("allreduce", global_step);
      engine_->average_gradients();
      const double t4 = now_seconds();
      // With overlap the loop's span is the wait for what backward did not hide.
      timeline.span(Phase::allreduce, t3, t4);
      if (timeline.enabled()) {
        for (const auto& [b, e] : engine_->allreduce_spans()) timeline.span(Phase::allreduce, b, e, StepTimeline::communication);
      }
      allreduce_s += t4 - t3;
      lr_now = lr_at_(static_cast<long>(global_step));
      engine_->step(static_cast<float>(lr_now));
      training_forwards += passes;
      const double t5 = now_seconds();
      timeline.span(Phase::optimizer, t4, t5);
      ++global_step;
      watchdog.beat("compute", global_step);
      if (s + 1 == skip) timed_t0 = t5;
      const Tally t = engine_->peek_train_tally();
      divergence.after_step(t.loss_sum, global_step, epoch + 1, lr_now);
      if (t.samples > 0) progress.update(s + 1, t.loss_sum / t.samples, t.correct / t.samples);
    }
    const Tally tally = engine_->train_tally();
    const double epoch_t1 = now_seconds();
    EpochRecord rec;
    rec.epoch = epoch + 1;
    rec.steps = steps;
    rec.timed_steps = steps - skip;
    rec.seconds = epoch_t1 - epoch_t0;
    rec.step_ms = rec.seconds / static_cast<double>(steps) * 1e3;
    rec.images_per_second = static_cast<double>(rec.timed_steps * global_batch()) / (epoch_t1 - timed_t0);
    rec.data_wait_seconds = loader.take_wait_seconds();
    rec.allreduce_seconds = allreduce_s;
    rec.lr = lr_now;
    rec.ranks = ranks;
    rec.batch_per_rank = batch;
    rec.global_batch = global_batch();
    rec.global_step = global_step;
    double sums[3] = {tally.loss_sum, tally.correct, tally.samples};
    watchdog.beat("metrics", global_step);
    comm_.allreduce(sums, sums, 3, comm::DataType::f64, comm::ReduceOp::sum);
    rec.loss = sums[0] / sums[2];
    rec.accuracy = sums[1] / sums[2];
    if (config_.evaluate) {
      const double e0 = now_seconds();
      watchdog.beat("evaluation", global_step);
      const auto [test_loss, test_accuracy] = evaluate(eval_images, eval_labels);
      const double e1 = now_seconds();
      timeline.span(Phase::evaluate, e0, e1);
      rec.test_loss = test_loss;
      rec.test_accuracy = test_accuracy;
      rec.eval_seconds = e1 - e0;
    }
    rec.peak_rss_mib = comm_.max_over_ranks(peak_rss_mib());
    double skipped = static_cast<double>(train_->skipped_samples() + test_skipped() - skipped_before);
    comm_.allreduce(&skipped, &skipped, 1, comm::DataType::f64, comm::ReduceOp::sum);
    rec.skipped_samples = static_cast<std::size_t>(skipped);
    // The same on every rank: the averaged gradients are checked.
    rec.skipped_steps = static_cast<std::size_t>(engine_->skipped_steps() - skipped_steps_before);
    progress.end_epoch(rec.seconds, rec.loss, rec.accuracy, rec.test_loss, rec.test_accuracy);
    if (rec.skipped_steps > 0) {
      progress.line(fmt::format("  skipped {} optimizer step{} this epoch: the fp16 gradients overflowed, and the loss "
                                "scale was halved each time",
                                rec.skipped_steps, rec.skipped_steps == 1 ? "" : "s"));
    }
    if (rec.skipped_samples > 0) {
      progress.line(fmt::format("  skipped {} bad sample{} this epoch (the next good sample took each one's place)",
                                rec.skipped_samples, rec.skipped_samples == 1 ? "" : "s"));
    }
    progress.line(fmt::format("  {:.1f} images/sec over steps {}-{} ({} rank{}, global batch {}); data wait {:.2f} s, "
                              "allreduce {:.2f} s; peak RSS {:.0f} MiB",
                              rec.images_per_second, skip + 1, steps, ranks, ranks == 1 ? "" : "s", rec.global_batch,
                              rec.data_wait_seconds, rec.allreduce_seconds, rec.peak_rss_mib));
    if (rank == 0 && !config_.checkpoint.empty()) {
      const double c0 = now_seconds();
      watchdog.beat("checkpoint", global_step);
      engine_->store_to_host();
      save_checkpoint(config_.checkpoint,
                      {config_.model, optimizer.name(), {epoch + 1, global_step, training_forwards}, config_.seed, 0,
                       comm_.size(), static_cast<std::int64_t>(global_batch())},
                      params, optimizer);
      timeline.span(Phase::checkpoint, c0, now_seconds());
    }
    watchdog.beat("epoch end", global_step);
    rec.wall_seconds = now_seconds() - t_start;
    result.epochs.push_back(rec);
    if (on_epoch_) on_epoch_(rec);
  }
  engine_->store_to_host();
  if (timeline.enabled()) timeline.gather_and_write(comm_, config_.timeline);
  result.seconds = now_seconds() - t_start;
  return result;
}

}  // namespace scalelab::train
