// Checkpoints: everything needed to continue training exactly where it stopped: the parameters,
// the non-trainable state (BatchNorm running statistics), the optimizer's state and step count,
// the epoch and global step reached, and where every random stream stood: the seed and the
// training forwards each rank has run (the position of each rank's Dropout stream; the sampler's
// shuffle is a function of the seed and the epoch), so a resumed run equals an uninterrupted one
// bit for bit. Written by rank 0 only (Horovod's rule: one writer),
// atomically (core/atomic_file.h): a temporary file of its own beside the target is written,
// fsync'ed, renamed over the target and the folder fsync'ed, so a crash or kill -9 at any moment
// leaves either the previous checkpoint or the new one, never half of one; a failed write (a full
// disk) removes the temporary. NaN or infinite values are refused before anything is written.
//
// File: "SCALELABCKPT\n", a little-endian u64 header length, a JSON header (format version,
// model name, layout fingerprint text, sizes, optimizer name, counters, seed), the three float32
// arrays, then a u64 FNV-1a checksum of everything before it. Format 2 added "seed" and
// "training_forwards"; format 1 files are still read (training_forwards -1: unknown).
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/file_lock.h"

#include "nn/parameter.h"
#include "optim/optimizer.h"

namespace scalelab::train {

struct CheckpointCounters {
  std::int64_t epochs_done = 0;
  std::int64_t global_step = 0;
  std::int64_t training_forwards = 0;  // per rank, since the start; -1: unknown (format 1)
};

struct CheckpointMeta {
  std::string model;
  std::string optimizer;
  CheckpointCounters counters;
  std::uint64_t seed = 0;              // TrainConfig::seed of the run that wrote it
  int format = 0;                      // as read; save_checkpoint writes the current one
  // The run that wrote it: ranks and global batch (0 in checkpoints that did not record them).
  std::int64_t ranks = 0;
  std::int64_t global_batch = 0;
};

// One job per checkpoint file: an advisory lock (flock) on "<path>.lock", held from the job's
// start to its end, so two jobs given the same --checkpoint do not overwrite each other's epochs.
// The lock file holds the holder's pid and is removed on release (a killed job's stale file is
// harmless: the kernel dropped its lock). Taking a lock another process holds is a usage error
// naming the file and that pid.
//   CheckpointLock lock(config.checkpoint);   // throws when another job holds it
class CheckpointLock {
 public:
  explicit CheckpointLock(const std::string& path);

 private:
  FileLock lock_;  // core/file_lock.h
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
