// Checkpoints: everything needed to continue training exactly where it stopped: the parameters,
// the non-trainable state (BatchNorm running statistics), the optimizer's state and step count,
// and the epoch and global step reached. Written by rank 0 only (Horovod's rule: one writer),
// atomically: a temporary file beside the target is written, fsync'ed, renamed over the target
// and the folder fsync'ed, so a crash or kill -9 at any moment leaves either the previous
// checkpoint or the new one, never half of one.
//
// File: "SCALELABCKPT\n", a little-endian u64 header length, a JSON header (format version,
// model name, layout fingerprint text, sizes, optimizer name, counters), the three float32
// arrays, then a u64 FNV-1a checksum of everything before it.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "nn/parameter.h"
#include "optim/optimizer.h"

namespace scalelab::train {

struct CheckpointCounters {
  std::int64_t epochs_done = 0;
  std::int64_t global_step = 0;
};

struct CheckpointMeta {
  std::string model;
  std::string optimizer;
  CheckpointCounters counters;
};

// Writes the checkpoint to `path` atomically. `after_bytes`, when set, is called after each
// block of the temporary file is written (tests use it to kill the writer mid-file).
void save_checkpoint(const std::string& path, const CheckpointMeta& meta, const nn::ParameterSet& params,
                     const optim::Optimizer& optimizer,
                     const std::function<void(std::size_t bytes_written)>& after_bytes = {});
// Reads `path` into params and optimizer (which must have the checkpoint's layout: same model,
// same optimizer). Every mismatch or corruption is an input error naming the file.
CheckpointMeta load_checkpoint(const std::string& path, const std::string& model, nn::ParameterSet& params,
                               optim::Optimizer& optimizer);

}  // namespace scalelab::train
