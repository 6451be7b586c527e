// TrainConfig::validate and the JSON forms of TrainConfig and EpochRecord (train/config.h).
#include "train/config.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "collectives/algorithm.h"
#include "core/error.h"
#include "core/limits.h"
#include "core/text.h"
#include "nn/model.h"
#include "optim/factory.h"

namespace scalelab::train {

namespace {

[[noreturn]] void bad(const char* parameter, const std::string& detail) {
  throw_parameter(ErrorKind::usage, parameter, detail);
}

// "at most 16 loader threads per rank on this machine (the larger of 16 and 4 per hardware thread, 2 here)".
std::string thread_bound(const char* purpose) {
  return fmt::format("at most {} {} threads per rank on this machine ({})", limits::max_threads(), purpose,
                     limits::machine_bound_basis(limits::kThreadsPerHardwareThread));
}

}  // namespace

void TrainConfig::validate() const {
  const auto& models = nn::model_names();
  if (std::find(models.begin(), models.end(), model) == models.end()) {
    bad("model", model + ": unknown model; use one of " + join_list(models));
  }
  if (device != "cpu" && device != "cuda") bad("device", device + ": unknown device; use cpu or cuda");
  if (cuda_graphs != "on" && cuda_graphs != "off") bad("cuda_graphs", cuda_graphs + ": use on or off");
  if (precision != "fp32" && precision != "tf32" && precision != "bf16" && precision != "fp16") {
    bad("precision", precision + ": unknown precision; use fp32, tf32, bf16 or fp16");
  }
  if (device == "cpu" && precision != "fp32") {
    bad("precision", precision + ": the CPU engine computes in float32 only; use fp32, or the cuda device for " +
                         precision);
  }
  if (overlap != "auto" && overlap != "on" && overlap != "off") bad("overlap", overlap + ": use auto, on or off");
  const auto optimizers = optim::optimizer_names();
  if (std::find(optimizers.begin(), optimizers.end(), optimizer) == optimizers.end()) {
    bad("optimizer", optimizer + ": unknown optimizer; use one of " + join_list(optimizers));
  }
  if (epochs < 1) bad("epochs", fmt::format("{}: train at least one epoch", epochs));
  if (epochs > limits::kMaxEpochs) bad("epochs", fmt::format("{}: at most {} epochs", epochs, limits::kMaxEpochs));
  if (batch_size == 0) bad("batch_size", "0: a batch needs at least one sample per rank");
  if (!(lr > 0) || !std::isfinite(lr)) bad("lr", fmt::format("{}: the learning rate must be a positive finite number, e.g. 0.001", lr));
  // The optimizers hold it in float32: a smaller value would silently become 0 there.
  if (lr < std::numeric_limits<float>::min() || lr > std::numeric_limits<float>::max()) {
    bad("lr", fmt::format("{:g}: outside the range a float32 learning rate holds ({:g} to {:g}), e.g. 0.001", lr,
                          std::numeric_limits<float>::min(), std::numeric_limits<float>::max()));
  }
  optimizer_options.validate();
  if (threads < 1) bad("threads", fmt::format("{}: use at least one compute thread", threads));
  if (threads > limits::max_threads()) bad("threads", fmt::format("{}: {}", threads, thread_bound("compute")));
  if (backward_passes_per_step < 1) {
    bad("backward_passes_per_step", fmt::format("{}: accumulate at least one backward pass per step", backward_passes_per_step));
  }
  if (backward_passes_per_step > limits::kMaxBackwardPasses) {
    bad("backward_passes_per_step", fmt::format("{}: accumulate at most {} backward passes per step", backward_passes_per_step,
                                                limits::kMaxBackwardPasses));
  }
  if (loader_workers < 1) bad("loader_workers", fmt::format("{}: use at least one loader thread", loader_workers));
  if (loader_workers > limits::max_threads()) {
    bad("loader_workers", fmt::format("{}: {}", loader_workers, thread_bound("loader")));
  }
  if (prefetch < 1) bad("prefetch", fmt::format("{}: prepare at least one batch ahead", prefetch));
  if (prefetch > limits::kMaxPrefetch) {
    bad("prefetch", fmt::format("{}: prepare at most {} batches ahead; a few keep the loader ahead", prefetch, limits::kMaxPrefetch));
  }
  if (!(progress_interval_s > 0) || !std::isfinite(progress_interval_s)) {
    bad("progress_interval_s", fmt::format("{}: give seconds above 0", progress_interval_s));
  }
  if (!(stall_timeout_s >= 0) || !std::isfinite(stall_timeout_s)) {
    bad("stall_timeout_s", fmt::format("{}: give seconds >= 0 (0: never)", stall_timeout_s));
  }
  if (algo != "auto") (void)collectives::find_algorithm(collectives::Collective::allreduce, algo, "algo");  // the table's own error
}

void to_json(nlohmann::json& j, const EpochRecord& r) {
  j = {{"epoch", r.epoch},
       {"loss", r.loss},
       {"accuracy", r.accuracy},
       {"test_loss", r.test_loss < 0 ? nlohmann::json(nullptr) : nlohmann::json(r.test_loss)},
       {"test_accuracy", r.test_accuracy < 0 ? nlohmann::json(nullptr) : nlohmann::json(r.test_accuracy)},
       {"images_per_second", r.images_per_second},
       {"seconds", r.seconds},
       {"eval_seconds", r.eval_seconds},
       {"wall_seconds", r.wall_seconds},
       {"steps", r.steps},
       {"timed_steps", r.timed_steps},
       {"step_ms", r.step_ms},
       {"data_wait_seconds", r.data_wait_seconds},
       {"skipped_samples", r.skipped_samples},
       {"skipped_steps", r.skipped_steps},
       {"allreduce_seconds", r.allreduce_seconds},
       {"lr", r.lr},
       {"ranks", r.ranks},
       {"batch_per_rank", r.batch_per_rank},
       {"global_batch", r.global_batch},
       {"global_step", r.global_step},
       {"peak_rss_mib", r.peak_rss_mib}};
}

nlohmann::json config_json(const TrainConfig& c) {
  return {{"model", c.model},
          {"device", c.device},
          {"cuda_graphs", c.cuda_graphs},
          {"precision", c.precision},
          {"dataset", c.dataset.name},
          {"data_dir", c.dataset.data_dir},
          {"epochs", c.epochs},
          {"batch_size", c.batch_size},
          {"lr", c.lr},
          {"optimizer", c.optimizer},
          {"momentum", c.optimizer_options.momentum},
          {"weight_decay", c.optimizer_options.weight_decay},
          {"threads", c.threads},
          {"max_steps", c.max_steps},
          {"seed", c.seed},
          {"checkpoint", c.checkpoint},
          {"resume", c.resume},
          {"algo", c.algo},
          {"bucket_cap_bytes", c.bucket_cap_bytes},
          {"fusion_threshold", c.bucket_cap_bytes},  // its former name, for readers of earlier records
          {"fp16_allreduce", c.fp16_allreduce},
          {"overlap", c.overlap},
          {"backward_passes_per_step", c.backward_passes_per_step},
          {"augment", c.dataset.augment},
          {"decode", c.dataset.decode},
          {"crop", c.dataset.crop},
          {"on_bad_sample", c.dataset.on_bad_sample},
          {"synthetic_data", c.synthetic_data},
          {"loader_workers", c.loader_workers},
          {"prefetch", c.prefetch},
          {"throughput_skip", c.throughput_skip},
          {"stall_timeout_s", c.stall_timeout_s}};
}

}  // namespace scalelab::train
