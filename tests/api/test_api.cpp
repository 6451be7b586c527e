// The public API's parts that need no job: the one-line errors without a Runtime and for bad
// arguments, the sharded sampler's shards, the learning-rate schedule, data set errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>

#include "scalelab/scalelab.h"

namespace {

template <class F>
std::string api_error(F&& f, int* exit_code = nullptr) {
  try {
    f();
  } catch (const scalelab::ApiError& e) {
    if (exit_code) *exit_code = e.exit_code();
    return e.what();
  }
  return "no error";
}

TEST(Api, WithoutRuntimeEveryJobCallSaysWhatToDo) {
  int code = 0;
  EXPECT_EQ(api_error([] { (void)scalelab::rank(); }, &code),
            "scalelab::rank: no scalelab::Runtime is alive: create one (scalelab::Runtime runtime;) at the top of main");
  EXPECT_EQ(code, 2);
  EXPECT_NE(api_error([] { (void)scalelab::average_over_ranks(1.0); }).find("scalelab::average_over_ranks: no scalelab::Runtime"),
            std::string::npos);
  const scalelab::Datasets d = scalelab::load_datasets({.name = "synthetic"});
  EXPECT_NE(api_error([&] { scalelab::Model m("mlp", d.train, 1); }).find("scalelab::Model: no scalelab::Runtime"),
            std::string::npos);
}

TEST(Api, ShardsAreDisjointAndCoverTheEpoch) {
  const std::size_t n = 1000;
  for (int world : {1, 2, 3}) {
    std::set<std::size_t> seen;
    std::size_t total = 0;
    for (int r = 0; r < world; ++r) {
      scalelab::ShardedSampler s(n, world, r, 5);
      s.set_epoch(2);
      EXPECT_EQ(s.indices().size(), (n + static_cast<std::size_t>(world) - 1) / static_cast<std::size_t>(world));
      seen.insert(s.indices().begin(), s.indices().end());
      total += s.indices().size();
      const auto b = s.batch_indices(1, 10);
      EXPECT_TRUE(std::equal(b.begin(), b.end(), s.indices().begin() + 10));
    }
    EXPECT_EQ(seen.size(), n) << world << " ranks";
    EXPECT_EQ(total - n, (static_cast<std::size_t>(world) - n % static_cast<std::size_t>(world)) % static_cast<std::size_t>(world));
  }
  scalelab::ShardedSampler a(n, 1, 0, 5), b(n, 1, 0, 5);
  a.set_epoch(0);
  b.set_epoch(1);
  EXPECT_NE(a.indices(), b.indices()) << "each epoch its own order";
}

TEST(Api, SamplerErrorsNameTheArgument) {
  int code = 0;
  EXPECT_EQ(api_error([] { scalelab::ShardedSampler s(10, 2, 2, 0); }, &code),
            "scalelab::ShardedSampler: rank 2 of world_size 2: pass scalelab::size() and scalelab::rank() (0 <= rank < world_size)");
  EXPECT_EQ(code, 2);
  scalelab::ShardedSampler s(100, 1, 0, 0);
  EXPECT_EQ(api_error([&] { (void)s.batch_indices(10, 10); }),
            "scalelab::ShardedSampler::batch_indices: step 10 with batch 10: this shard holds 10 whole batches: "
            "loop over 0 .. steps(batch)-1 with batch > 0");
  EXPECT_EQ(api_error([] { scalelab::ShardedSampler t(1, 2, 0, 0); }).rfind("more ranks (2) than training samples (1)", 0), 0u)
      << "more ranks than samples";
}

TEST(Api, ScheduleScalesAndWarmsUp) {
  scalelab::LrSchedule s({.base_lr = 0.1, .scaling = "linear", .reference_batch = 64, .global_batch = 192,
                          .warmup = "gradual", .warmup_epochs = 1, .workers = 3, .epochs = 2, .steps_per_epoch = 10});
  EXPECT_NEAR(s.peak_lr(), 0.3, 1e-12);
  EXPECT_EQ(s.warmup_steps(), 10);
  EXPECT_LT(s.lr(0), s.lr(5));
  EXPECT_NEAR(s.lr(15), 0.3, 1e-12);
  int code = 0;
  const std::string e = api_error([] { scalelab::LrSchedule t({.scaling = "quadratic"}); }, &code);
  EXPECT_EQ(e.rfind("scaling", 0), 0u) << e;
  EXPECT_NE(e.find("linear"), std::string::npos) << e;
  EXPECT_EQ(code, 2);
}

TEST(Api, DatasetErrorsNameTheFolder) {
  int code = 0;
  const std::string e = api_error([] { (void)scalelab::load_datasets({.name = "fashion-mnist", .data_dir = "/nonexistent/fm"}); }, &code);
  EXPECT_NE(e.find("/nonexistent/fm"), std::string::npos) << e;
  EXPECT_EQ(code, 2);
  const scalelab::Datasets d = scalelab::load_datasets({.name = "synthetic"});
  EXPECT_EQ(d.train.size(), 60000u);
  EXPECT_EQ(d.train.classes(), 10);
  scalelab::Batch b;
  const std::size_t bad[] = {3, 60000};
  EXPECT_EQ(api_error([&] { d.train.fill(bad, b); }),
            "scalelab::Dataset::fill: index 60000 is past the end of " + d.train.name() +
                " (60000 samples): take indices from a ShardedSampler of this data set");
  const std::size_t good[] = {3, 59999};
  d.train.fill(good, b);
  EXPECT_EQ(b.size(), 2u);
  EXPECT_EQ(b.images.size(), 2u * 28 * 28);
}

TEST(Api, NamesOfTheZoo) {
  const auto& m = scalelab::model_names();
  EXPECT_NE(std::find(m.begin(), m.end(), "cnn"), m.end());
  const auto o = scalelab::optimizer_names();
  EXPECT_NE(std::find(o.begin(), o.end(), "sgd"), o.end());
}

}  // namespace
