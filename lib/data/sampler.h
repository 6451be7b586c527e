// The sharded sampler, with PyTorch's DistributedSampler semantics: each epoch the indices
// 0..N-1 are shuffled from (seed, epoch) alike on every rank, the list is padded by repeating its
// first indices until it divides by the rank count, and rank r takes positions r, r+W, r+2W, ...
// So shards are disjoint (but for the few padding repeats) and every rank holds the same number
// of samples, ceil(N / W). The trainer then takes whole batches only: the last partial batch of a
// shard is dropped (Keras' steps_per_epoch = N // (W * batch), as the course does), so every rank
// runs the same number of steps and nobody waits at the end of an epoch.
//
//   ShardedSampler s(dataset.size(), comm.size(), comm.rank(), seed, /*shuffle=*/true);
//   s.set_epoch(e);  s.indices();  // this rank's ceil(N/W) indices for epoch e
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace scalelab::data {

class ShardedSampler {
 public:
  // More ranks than samples is a usage error (a rank would hold nothing but padding).
  ShardedSampler(std::size_t dataset_size, int world_size, int rank, std::uint64_t seed, bool shuffle);
  // Recomputes this rank's indices for `epoch` (allocates nothing after the first call).
  void set_epoch(std::uint64_t epoch);
  [[nodiscard]] const std::vector<std::size_t>& indices() const { return shard_; }
  [[nodiscard]] std::size_t samples_per_rank() const { return shard_.size(); }
  // Whole batches of `batch` in this rank's shard: the steps of one epoch.
  [[nodiscard]] std::size_t steps(std::size_t batch) const { return batch == 0 ? 0 : shard_.size() / batch; }
  // The unpadded, unshuffled shard: positions r, r+W, ... < N. For evaluation, where every
  // sample must count exactly once across ranks.
  [[nodiscard]] static std::vector<std::size_t> exact_shard(std::size_t dataset_size, int world_size, int rank);

 private:
  std::size_t n_;
  int world_;
  int rank_;
  std::uint64_t seed_;
  bool shuffle_;
  std::vector<std::size_t> all_;
  std::vector<std::size_t> shard_;
};

}  // namespace scalelab::data
