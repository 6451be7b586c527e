// The loader delivers the sampler's batches in order, whatever the worker count, reusing its
// buffers, and epoch after epoch.
#include <gtest/gtest.h>

#include <chrono>
#include <set>

#include "core/error.h"
#include "data/loader.h"
#include "data/sampler.h"
#include "data/synthetic.h"

using namespace scalelab::data;

TEST(Loader, DeliversBatchesInOrderMatchingDirectFill) {
  SyntheticDataset d(500, {1, 8, 8}, 10, 3, 0);
  ShardedSampler s(d.size(), 2, 1, 11, true);
  for (int workers : {1, 3}) {
    const auto t0 = std::chrono::steady_clock::now();
    BatchLoader loader(d, 16, workers, 3);
    std::set<const float*> buffers;
    std::vector<float> expect(16 * 64);
    std::vector<std::int32_t> expect_labels(16);
    for (std::uint64_t epoch = 0; epoch < 3; ++epoch) {
      s.set_epoch(epoch);
      const std::size_t steps = s.steps(16);
      ASSERT_EQ(steps, 250u / 16u);
      loader.start_epoch(s.indices(), steps);
      for (std::size_t k = 0; k < steps; ++k) {
        const Batch& b = loader.next();
        ASSERT_EQ(b.step, k);
        d.fill(std::span(s.indices()).subspan(k * 16, 16), expect.data(), expect_labels.data());
        EXPECT_TRUE(std::equal(expect.begin(), expect.end(), b.images));
        EXPECT_TRUE(std::equal(expect_labels.begin(), expect_labels.end(), b.labels));
        buffers.insert(b.images);
        loader.release(b);
      }
    }
    EXPECT_LE(buffers.size(), 3u);  // the prefetch depth: buffers are reused, never reallocated
    // The time next() spent waiting for the workers: some of the loop's wall time, no more.
    const double wait = loader.take_wait_seconds();
    EXPECT_GE(wait, 0.0);
    EXPECT_LE(wait, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    EXPECT_EQ(loader.take_wait_seconds(), 0.0);  // taking it resets it
  }
}

TEST(Loader, BatchSizeZeroIsAUsageError) {
  SyntheticDataset d(10, {1, 2, 2}, 2, 0, 0);
  EXPECT_THROW({ BatchLoader loader(d, 0, 1, 2); }, scalelab::Error);
}

// A data set whose pixels are the epoch it was asked for: the loader hands each epoch's number on.
class EpochEcho final : public Dataset {
 public:
  std::string name() const override { return "echo"; }
  std::size_t size() const override { return 40; }
  ImageShape shape() const override { return {1, 1, 1}; }
  int classes() const override { return 2; }
  void fill(std::span<const std::size_t> indices, float* images, std::int32_t* labels) const override {
    fill_for_epoch(0, indices, images, labels);
  }
  void fill_for_epoch(std::uint64_t epoch, std::span<const std::size_t> indices, float* images,
                      std::int32_t* labels) const override {
    for (std::size_t k = 0; k < indices.size(); ++k) {
      images[k] = static_cast<float>(epoch);
      labels[k] = 0;
    }
  }
};

TEST(Loader, EachEpochReachesTheDataSetForItsAugmentation) {
  const EpochEcho d;
  std::vector<std::size_t> indices(40);
  for (std::size_t i = 0; i < indices.size(); ++i) indices[i] = i;
  for (int workers : {1, 2}) {
    BatchLoader loader(d, 8, workers, 2);
    for (std::uint64_t epoch : {0u, 1u, 7u}) {
      loader.start_epoch(indices, 5, epoch);
      for (std::size_t k = 0; k < 5; ++k) {
        const Batch& b = loader.next();
        for (std::size_t j = 0; j < b.size; ++j) EXPECT_EQ(b.images[j], static_cast<float>(epoch)) << workers << " workers";
        loader.release(b);
      }
    }
  }
}
