// scalelab's public API, checkpoints: the model's parameters and running statistics, the
// optimizer's state and the epochs done, written atomically (a crash leaves the old file or the
// new one). One writer: call it on rank 0 only.
//
//   scalelab::on_rank0([&] { scalelab::save_checkpoint("model.ckpt", model, optimizer, epoch + 1); });
//   std::int64_t epochs_done = scalelab::load_checkpoint("model.ckpt", model, optimizer);
#pragma once
#include <cstdint>
#include <string>

namespace scalelab {

class Model;
class Optimizer;

void save_checkpoint(const std::string& path, const Model& model, const Optimizer& optimizer,
                     std::int64_t epochs_done);
// Reads `path` into model and optimizer (same model, same optimizer, else ApiError naming the
// file); returns the epochs done. Every rank may read it, or rank 0 reads and broadcasts.
std::int64_t load_checkpoint(const std::string& path, Model& model, Optimizer& optimizer);

}  // namespace scalelab
