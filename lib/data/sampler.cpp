// ShardedSampler (data/sampler.h). The shuffle is Fisher-Yates driven by Rng(seed, epoch), so
// it is the same on every rank and every platform with the same standard library.
#include "data/sampler.h"

#include <numeric>
#include <string>

#include "core/error.h"
#include "core/rng.h"

namespace scalelab::data {

ShardedSampler::ShardedSampler(std::size_t dataset_size, int world_size, int rank, std::uint64_t seed, bool shuffle)
    : n_(dataset_size), world_(world_size), rank_(rank), seed_(seed), shuffle_(shuffle) {
  if (world_ < 1 || rank_ < 0 || rank_ >= world_) {
    throw_usage("sampler: rank " + std::to_string(rank) + " of " + std::to_string(world_size) + " is not a valid place");
  }
  if (static_cast<std::size_t>(world_) > n_) {
    throw_usage("more ranks (" + std::to_string(world_) + ") than training samples (" + std::to_string(n_) +
                "); run fewer ranks or use a larger dataset");
  }
  const std::size_t per_rank = (n_ + static_cast<std::size_t>(world_) - 1) / static_cast<std::size_t>(world_);
  all_.resize(per_rank * static_cast<std::size_t>(world_));
  shard_.resize(per_rank);
  set_epoch(0);
}

void ShardedSampler::set_epoch(std::uint64_t epoch) {
  std::iota(all_.begin(), all_.begin() + static_cast<std::ptrdiff_t>(n_), std::size_t{0});
  if (shuffle_) {
    Rng rng(seed_, epoch);
    for (std::size_t i = n_ - 1; i > 0; --i) {
      const std::size_t j = static_cast<std::size_t>(rng.below(i + 1));
      std::swap(all_[i], all_[j]);
    }
  }
  for (std::size_t i = n_; i < all_.size(); ++i) all_[i] = all_[i - n_];  // pad from the front
  const auto w = static_cast<std::size_t>(world_);
  for (std::size_t k = 0; k < shard_.size(); ++k) shard_[k] = all_[k * w + static_cast<std::size_t>(rank_)];
}

std::vector<std::size_t> ShardedSampler::exact_shard(std::size_t dataset_size, int world_size, int rank) {
  std::vector<std::size_t> out;
  for (std::size_t i = static_cast<std::size_t>(rank); i < dataset_size; i += static_cast<std::size_t>(world_size)) {
    out.push_back(i);
  }
  return out;
}

}  // namespace scalelab::data
