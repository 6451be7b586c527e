// agreed_fields and require_same_config (train/config_check.h).
//
// Left out, because they may differ between ranks without changing what is trained or which
// collectives run:
//   checkpoint, resume   only rank 0 writes the checkpoint and reads --resume (its state is
//                        broadcast); the other ranks' values are never used
//   verbose, progress_interval_s
//                        only rank 0 prints progress
//   throughput_skip      only rank 0's images/sec is reported
//   stall_timeout_s      each rank's own watchdog; a shorter one only ends that rank sooner
//   threads, loader_workers, prefetch
//                        compute and loader threads of this rank: speed, not results (a rank on
//                        a bigger host may use more)
// The timeline's path is rank 0's alone, but whether there is one decides whether every rank
// joins the gather at the end, so that much is compared.
// A new TrainConfig field belongs in the list below or in this comment.
#include "train/config_check.h"

#include <fmt/format.h>

namespace scalelab::train {

namespace {

std::string text(bool b) { return b ? "on" : "off"; }
std::string text(double v) { return fmt::format("{}", v); }
std::string text(float v) { return fmt::format("{}", v); }

}  // namespace

std::vector<comm::NamedValue> agreed_fields(const TrainConfig& c) {
  const optim::OptimizerOptions& o = c.optimizer_options;
  return {
      {"model", c.model},
      {"device", c.device},
      {"cuda_graphs", c.cuda_graphs},
      {"precision", c.precision},
      {"overlap", c.overlap},
      {"dataset", c.dataset.name == "synthetic" ? fmt::format("synthetic ({} + {} samples)", c.dataset.synthetic_train,
                                                              c.dataset.synthetic_test)
                                                : c.dataset.name},
      {"data_dir", c.dataset.data_dir},
      {"augment", c.dataset.augment},
      {"decode", c.dataset.decode},
      {"crop", std::to_string(c.dataset.crop)},
      {"on_bad_sample", c.dataset.on_bad_sample},
      {"synthetic_data", text(c.synthetic_data)},
      {"epochs", std::to_string(c.epochs)},
      {"batch_size", std::to_string(c.batch_size)},
      {"lr", text(c.lr)},
      {"optimizer", c.optimizer},
      {"momentum", text(o.momentum)},
      {"dampening", text(o.dampening)},
      {"nesterov", text(o.nesterov)},
      {"weight_decay", text(o.weight_decay)},
      {"beta1", text(o.beta1)},
      {"beta2", text(o.beta2)},
      {"eps", text(o.eps)},
      {"trust_coefficient", text(o.trust_coefficient)},
      {"exclude_bias_and_norm", text(o.exclude_bias_and_norm)},
      {"max_steps", std::to_string(c.max_steps)},
      {"seed", c.dataset.seed == c.seed ? std::to_string(c.seed) : fmt::format("{} (data {})", c.seed, c.dataset.seed)},
      {"timeline", text(!c.timeline.empty())},
      {"algo", c.algo},
      {"bucket_cap_bytes", std::to_string(c.bucket_cap_bytes)},
      {"fp16_allreduce", text(c.fp16_allreduce)},
      {"backward_passes_per_step", std::to_string(c.backward_passes_per_step)},
      {"evaluate", text(c.evaluate)},  // the CLI's --no-eval
  };
}

void require_same_config(comm::Communicator& comm, const TrainConfig& c) {
  comm::require_same_fields(comm, agreed_fields(c), ErrorKind::usage);
}

}  // namespace scalelab::train
