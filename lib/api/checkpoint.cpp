// The public API's checkpoints (include/scalelab/checkpoint.h) over lib/train/checkpoint.h.
#include <filesystem>

#include "api/context.h"
#include "api/trace.h"
#include "nn/model.h"
#include "scalelab/checkpoint.h"
#include "scalelab/model.h"
#include "scalelab/optimizer.h"
#include "train/checkpoint.h"

namespace scalelab {

void save_checkpoint(const std::string& path, const Model& model, const Optimizer& optimizer, std::int64_t epochs_done) {
  api::translated([&] {
    train::CheckpointMeta meta;
    meta.model = model.name();
    meta.optimizer = optimizer.name();
    meta.counters.epochs_done = epochs_done;
    meta.counters.global_step = optimizer.step_count();
    meta.counters.training_forwards = -1;
    train::save_checkpoint(path, meta, model.impl().parameters(), optimizer.impl());
  });
  if (api::tracing()) {
    std::error_code ec;
    const std::filesystem::path full = std::filesystem::absolute(path, ec);
    api::trace("file", {{"kind", "checkpoint"}, {"path", ec ? path : full.string()}, {"epochs_done", epochs_done}});
  }
}

std::int64_t load_checkpoint(const std::string& path, Model& model, Optimizer& optimizer) {
  return api::translated([&] {
    return train::load_checkpoint(path, model.name(), model.impl().parameters(), optimizer.impl()).counters.epochs_done;
  });
}

}  // namespace scalelab
