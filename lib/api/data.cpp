// The public API's data sets and sampler (include/scalelab/data.h) over lib/data.
#include <memory>

#include <algorithm>

#include "api/context.h"
#include "api/trace.h"
#include "data/load.h"
#include "data/sampler.h"
#include "scalelab/data.h"

namespace scalelab {

Dataset::Dataset(std::shared_ptr<const data::Dataset> impl) : impl_(std::move(impl)) {}
std::string Dataset::name() const { return impl_->name(); }
std::size_t Dataset::size() const { return impl_->size(); }
int Dataset::classes() const { return impl_->classes(); }
ImageShape Dataset::shape() const {
  const data::ImageShape s = impl_->shape();
  return {s.channels, s.height, s.width};
}

void Dataset::fill(std::span<const std::size_t> indices, Batch& batch) const {
  for (std::size_t i : indices) {
    if (i >= impl_->size()) {
      throw ApiError("scalelab::Dataset::fill: index " + std::to_string(i) + " is past the end of " + impl_->name() +
                         " (" + std::to_string(impl_->size()) + " samples): take indices from a ShardedSampler of this data set",
                     2);
    }
  }
  batch.images.resize(indices.size() * impl_->shape().elements());
  batch.labels.resize(indices.size());
  api::translated([&] { impl_->fill(indices, batch.images.data(), batch.labels.data()); });
  if (api::tracing()) {
    constexpr std::size_t kPerLine = 256;  // keeps each line under the trace's 4096 bytes
    for (std::size_t at = 0; at < indices.size(); at += kPerLine) {
      const auto part = indices.subspan(at, std::min(kPerLine, indices.size() - at));
      api::trace("samples", {{"dataset", impl_->name()}, {"indices", std::vector<std::size_t>(part.begin(), part.end())}});
    }
  }
}

Datasets load_datasets(const DatasetOptions& options) {
  return api::translated([&] {
    data::DatasetSplits s = data::load_dataset({.name = options.name, .data_dir = options.data_dir, .seed = options.seed});
    return Datasets{Dataset(std::shared_ptr<const data::Dataset>(std::move(s.train))),
                    Dataset(std::shared_ptr<const data::Dataset>(std::move(s.test)))};
  });
}

std::vector<std::string> dataset_names() { return data::dataset_names(); }

ShardedSampler::ShardedSampler(std::size_t dataset_size, int world_size, int rank, std::uint64_t seed, bool shuffle) {
  if (world_size < 1 || rank < 0 || rank >= world_size) {
    throw ApiError("scalelab::ShardedSampler: rank " + std::to_string(rank) + " of world_size " +
                       std::to_string(world_size) + ": pass scalelab::size() and scalelab::rank() (0 <= rank < world_size)",
                   2);
  }
  impl_ = api::translated([&] { return std::make_unique<data::ShardedSampler>(dataset_size, world_size, rank, seed, shuffle); });
  impl_->set_epoch(0);
  if (api::tracing()) {
    api::trace("sampler", {{"dataset_size", dataset_size}, {"world_size", world_size}, {"shard", rank}, {"seed", seed},
                           {"shuffle", shuffle}});
  }
}
ShardedSampler::~ShardedSampler() = default;
ShardedSampler::ShardedSampler(ShardedSampler&&) noexcept = default;
ShardedSampler& ShardedSampler::operator=(ShardedSampler&&) noexcept = default;

void ShardedSampler::set_epoch(std::uint64_t epoch) {
  impl_->set_epoch(epoch);
  if (api::tracing()) api::trace("epoch", {{"epoch", epoch}, {"samples", impl_->indices().size()}});
}
const std::vector<std::size_t>& ShardedSampler::indices() const { return impl_->indices(); }
std::size_t ShardedSampler::steps(std::size_t batch) const { return impl_->steps(batch); }

std::span<const std::size_t> ShardedSampler::batch_indices(std::size_t step, std::size_t batch) const {
  if (batch == 0 || step >= impl_->steps(batch)) {
    throw ApiError("scalelab::ShardedSampler::batch_indices: step " + std::to_string(step) + " with batch " +
                       std::to_string(batch) + ": this shard holds " + std::to_string(impl_->steps(batch)) +
                       " whole batches: loop over 0 .. steps(batch)-1 with batch > 0",
                   2);
  }
  return std::span<const std::size_t>(impl_->indices()).subspan(step * batch, batch);
}

std::vector<std::size_t> ShardedSampler::exact_shard(std::size_t dataset_size, int world_size, int rank) {
  if (world_size < 1 || rank < 0 || rank >= world_size) {
    throw ApiError("scalelab::ShardedSampler::exact_shard: rank " + std::to_string(rank) + " of world_size " +
                       std::to_string(world_size) + ": pass scalelab::size() and scalelab::rank()",
                   2);
  }
  return data::ShardedSampler::exact_shard(dataset_size, world_size, rank);
}

}  // namespace scalelab
