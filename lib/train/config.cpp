// JSON forms of TrainConfig and EpochRecord (train/config.h).
#include "train/config.h"

namespace scalelab::train {

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
          {"fusion_threshold", c.fusion_threshold},
          {"fp16_allreduce", c.fp16_allreduce},
          {"backward_passes_per_step", c.backward_passes_per_step},
          {"loader_workers", c.loader_workers},
          {"prefetch", c.prefetch},
          {"throughput_skip", c.throughput_skip},
          {"stall_timeout_s", c.stall_timeout_s}};
}

}  // namespace scalelab::train
