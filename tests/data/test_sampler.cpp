// The sharded sampler keeps DistributedSampler's promises: disjoint shards covering the dataset,
// equal sizes with front padding, a shuffle that depends on (seed, epoch) only.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "core/error.h"
#include "data/sampler.h"

using scalelab::data::ShardedSampler;

TEST(Sampler, ShardsAreDisjointEqualAndCoverTheData) {
  for (std::size_t n : {10u, 11u, 12u, 1000u}) {
    for (int w : {1, 2, 3, 4}) {
      std::vector<std::size_t> all;
      const std::size_t per = (n + static_cast<std::size_t>(w) - 1) / static_cast<std::size_t>(w);
      for (int r = 0; r < w; ++r) {
        ShardedSampler s(n, w, r, 5, true);
        s.set_epoch(3);
        ASSERT_EQ(s.samples_per_rank(), per);
        all.insert(all.end(), s.indices().begin(), s.indices().end());
      }
      // Every sample appears; the total exceeds n only by the padding, which repeats samples.
      std::set<std::size_t> distinct(all.begin(), all.end());
      EXPECT_EQ(distinct.size(), n);
      EXPECT_EQ(all.size(), per * static_cast<std::size_t>(w));
    }
  }
}

TEST(Sampler, ShuffleDependsOnSeedAndEpochOnly) {
  ShardedSampler a(100, 2, 0, 9, true), b(100, 2, 0, 9, true), c(100, 2, 0, 10, true);
  a.set_epoch(1);
  b.set_epoch(1);
  c.set_epoch(1);
  EXPECT_EQ(a.indices(), b.indices());
  EXPECT_NE(a.indices(), c.indices());
  b.set_epoch(2);
  EXPECT_NE(a.indices(), b.indices());
}

TEST(Sampler, UnshuffledIsStrided) {
  ShardedSampler s(10, 3, 1, 0, false);
  EXPECT_EQ(s.indices(), (std::vector<std::size_t>{1, 4, 7, 0}));  // 10 padded to 12 with 0, 1
  EXPECT_EQ(s.steps(2), 2u);
  EXPECT_EQ(ShardedSampler::exact_shard(10, 3, 1), (std::vector<std::size_t>{1, 4, 7}));
}

TEST(Sampler, MoreRanksThanSamplesIsAUsageError) {
  try {
    ShardedSampler s(3, 4, 0, 0, true);
    FAIL();
  } catch (const scalelab::Error& e) {
    EXPECT_EQ(e.exit_code(), 2);
    EXPECT_NE(std::string(e.what()).find("more ranks (4) than training samples (3)"), std::string::npos);
  }
}
