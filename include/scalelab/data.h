// scalelab's public API, the data: the data sets (Fashion-MNIST, synthetic, a folder of
// MNIST-format files), batches of float32 images, and the sharded sampler that gives each rank
// its own part of every epoch (PyTorch's DistributedSampler).
//
//   scalelab::Datasets data = scalelab::load_datasets({.name = "fashion-mnist"});
//   scalelab::ShardedSampler sampler(data.train.size(), scalelab::size(), scalelab::rank(), /*seed=*/42);
//   scalelab::Batch batch;
//   sampler.set_epoch(epoch);
//   for (std::size_t s = 0; s < sampler.steps(64); ++s) {
//     data.train.fill(sampler.batch_indices(s, 64), batch);   // batch.images, batch.labels
//   }
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace scalelab {

namespace data { class Dataset; class ShardedSampler; }

struct ImageShape {
  int channels = 1;
  int height = 0;
  int width = 0;
};

// Images (NCHW, float32 in [0, 1]) and their class labels, sample after sample.
struct Batch {
  std::vector<float> images;
  std::vector<std::int32_t> labels;
  [[nodiscard]] std::size_t size() const { return labels.size(); }
};

// One split of a data set. Cheap to copy (the samples are shared).
class Dataset {
 public:
  [[nodiscard]] std::string name() const;
  [[nodiscard]] std::size_t size() const;
  [[nodiscard]] ImageShape shape() const;
  [[nodiscard]] int classes() const;
  // Fills `batch` with the samples `indices` (each below size()).
  void fill(std::span<const std::size_t> indices, Batch& batch) const;

  explicit Dataset(std::shared_ptr<const data::Dataset> impl);
  [[nodiscard]] const data::Dataset& impl() const { return *impl_; }

 private:
  std::shared_ptr<const data::Dataset> impl_;
};

struct DatasetOptions {
  std::string name = "fashion-mnist";  // fashion-mnist | synthetic | a folder of MNIST-format files
  std::string data_dir{};              // fashion-mnist's folder; else $SCALELAB_DATA_DIR, else Debian's
  std::uint64_t seed = 42;             // synthetic only
};

struct Datasets {
  Dataset train;
  Dataset test;
};

// Opens the training and test splits; a missing or corrupt data set throws ApiError naming the
// file or folder and the fix.
[[nodiscard]] Datasets load_datasets(const DatasetOptions& options = {});
[[nodiscard]] std::vector<std::string> dataset_names();

// Each epoch the indices 0..N-1 are shuffled alike on every rank from (seed, epoch), padded to a
// multiple of world_size, and rank r takes positions r, r+W, r+2W, ...: disjoint shards of
// ceil(N/W) samples each. world_size 1 and rank 0 give the whole (shuffled) epoch.
class ShardedSampler {
 public:
  ShardedSampler(std::size_t dataset_size, int world_size, int rank, std::uint64_t seed, bool shuffle = true);
  ~ShardedSampler();
  ShardedSampler(ShardedSampler&&) noexcept;
  ShardedSampler& operator=(ShardedSampler&&) noexcept;

  void set_epoch(std::uint64_t epoch);
  // This rank's indices for the current epoch.
  [[nodiscard]] const std::vector<std::size_t>& indices() const;
  // Whole batches of `batch` samples in this rank's shard (the last partial batch is dropped).
  [[nodiscard]] std::size_t steps(std::size_t batch) const;
  // The indices of batch `step` (0 .. steps(batch)-1).
  [[nodiscard]] std::span<const std::size_t> batch_indices(std::size_t step, std::size_t batch) const;
  // The unpadded, unshuffled shard (positions r, r+W, ... < N): for evaluation, where every
  // sample must count exactly once across ranks.
  [[nodiscard]] static std::vector<std::size_t> exact_shard(std::size_t dataset_size, int world_size, int rank);

 private:
  std::unique_ptr<data::ShardedSampler> impl_;
};

}  // namespace scalelab
