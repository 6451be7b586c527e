// The public API across ranks (run at 2 and 3 ranks): one scalelab::Runtime for the whole
// program; broadcast_from_rank0 makes differing initial weights equal, DistributedOptimizer
// averages gradients (float32 and float16 on the wire, with accumulation), metrics average,
// a model that differs across ranks is refused on every rank.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <string>
#include <vector>

#include "scalelab/scalelab.h"

namespace {

scalelab::Datasets& synthetic() {
  static scalelab::Datasets d = scalelab::load_datasets({.name = "synthetic"});
  return d;
}

// A batch of 8 samples that differs by rank.
scalelab::Batch rank_batch() {
  scalelab::Batch b;
  std::vector<std::size_t> idx(8);
  std::iota(idx.begin(), idx.end(), static_cast<std::size_t>(scalelab::rank()) * 8);
  synthetic().train.fill(idx, b);
  return b;
}

TEST(ApiMpi, RanksAndMetricAverage) {
  EXPECT_GE(scalelab::size(), 2);
  EXPECT_LT(scalelab::rank(), scalelab::size());
  EXPECT_LT(scalelab::local_rank(), scalelab::local_size());
  EXPECT_DOUBLE_EQ(scalelab::average_over_ranks(scalelab::rank()), (scalelab::size() - 1) / 2.0);
  const std::vector<double> s = scalelab::sum_over_ranks({1.0, static_cast<double>(scalelab::rank())});
  EXPECT_DOUBLE_EQ(s[0], scalelab::size());
  EXPECT_DOUBLE_EQ(s[1], scalelab::size() * (scalelab::size() - 1) / 2.0);
}

TEST(ApiMpi, BroadcastMakesDifferentInitialWeightsEqual) {
  scalelab::Model model("mlp", synthetic().train, 7);
  scalelab::Optimizer sgd(model, "sgd");
  EXPECT_FALSE(scalelab::parameters_agree(model)) << "each rank draws its own initial weights";
  scalelab::broadcast_from_rank0(model, sgd);
  EXPECT_TRUE(scalelab::parameters_agree(model));
}

TEST(ApiMpi, DistributedOptimizerTakesTheMeanGradientStep) {
  for (bool fp16 : {false, true}) {
    scalelab::Model model("mlp", synthetic().train, 7);
    scalelab::Optimizer sgd(model, "sgd", {.momentum = 0.0f});
    scalelab::DistributedOptimizer opt(sgd, {.fp16_wire = fp16});
    scalelab::broadcast_from_rank0(model, sgd);
    model.train_batch(rank_batch());
    const std::vector<double> grads(model.gradients().begin(), model.gradients().end());
    const std::vector<double> before(model.parameters().begin(), model.parameters().end());
    std::vector<double> mean = scalelab::sum_over_ranks(grads);
    for (double& g : mean) g /= scalelab::size();
    ASSERT_TRUE(opt.step(0.5f));
    EXPECT_TRUE(scalelab::parameters_agree(model)) << (fp16 ? "fp16" : "fp32");
    double worst = 0;
    for (std::size_t i = 0; i < mean.size(); ++i) {
      worst = std::max(worst, std::abs(model.parameters()[i] - (before[i] - 0.5 * mean[i])));
    }
    EXPECT_LT(worst, fp16 ? 2e-3 : 1e-6) << (fp16 ? "fp16" : "fp32");
    for (float g : model.gradients()) ASSERT_EQ(g, 0.0f) << "step zeroes the gradients";
  }
}

TEST(ApiMpi, WithoutTheDistributedOptimizerRanksDrift) {
  scalelab::Model model("mlp", synthetic().train, 7);
  scalelab::Optimizer sgd(model, "sgd");
  scalelab::broadcast_from_rank0(model, sgd);
  model.train_batch(rank_batch());
  sgd.step(0.1f);
  EXPECT_FALSE(scalelab::parameters_agree(model));
}

TEST(ApiMpi, AccumulationStepsEveryKthPass) {
  scalelab::Model model("mlp", synthetic().train, 7);
  scalelab::Optimizer sgd(model, "sgd");
  scalelab::DistributedOptimizer opt(sgd, {.backward_passes_per_step = 3});
  scalelab::broadcast_from_rank0(model, sgd);
  EXPECT_FLOAT_EQ(opt.gradient_scale(), 1.0f / 3.0f);
  const std::vector<float> start(model.parameters().begin(), model.parameters().end());
  for (int pass = 1; pass <= 3; ++pass) {
    model.train_batch(rank_batch(), opt.gradient_scale());
    EXPECT_EQ(opt.step(0.1f), pass == 3) << "pass " << pass;
    if (pass < 3) {
      EXPECT_TRUE(std::equal(start.begin(), start.end(), model.parameters().begin())) << "no step before the 3rd pass";
    }
  }
  EXPECT_EQ(sgd.step_count(), 1);
  EXPECT_TRUE(scalelab::parameters_agree(model));
}

TEST(ApiMpi, DifferentModelsAreRefusedOnEveryRank) {
  scalelab::Model model(scalelab::rank() == 0 ? "mlp" : "trivial", synthetic().train, 7);
  scalelab::Optimizer sgd(model, "sgd");
  try {
    scalelab::broadcast_from_rank0(model, sgd);
    FAIL() << "no error";
  } catch (const scalelab::ApiError& e) {
    EXPECT_NE(std::string(e.what()).find("rank"), std::string::npos) << e.what();
    EXPECT_EQ(e.exit_code(), 1) << e.what();
  }
}

template <class F>
std::string api_error(F&& f) {
  try {
    f();
  } catch (const scalelab::ApiError& e) {
    EXPECT_EQ(e.exit_code(), 2) << e.what();
    return e.what();
  }
  return "no error";
}

TEST(ApiMpi, BadArgumentsAreOneLineErrors) {
  scalelab::Model model("trivial", synthetic().train, 7);
  scalelab::Optimizer sgd(model, "sgd");
  std::string e = api_error([&] { scalelab::DistributedOptimizer d(sgd, {.backward_passes_per_step = 0}); });
  EXPECT_EQ(e.rfind("backward_passes_per_step 0", 0), 0u) << e;
  e = api_error([&] { scalelab::DistributedOptimizer d(sgd, {.algorithm = "nope"}); });
  EXPECT_EQ(e.rfind("algorithm", 0), 0u) << e;
  EXPECT_NE(e.find("ring"), std::string::npos) << e;
  e = api_error([&] { scalelab::Optimizer o(model, "nope"); });
  EXPECT_NE(e.find("nope"), std::string::npos) << e;
  EXPECT_NE(e.find("sgd"), std::string::npos) << e;
  e = api_error([&] { sgd.step(-1.0f); });
  EXPECT_EQ(e.rfind("lr -1", 0), 0u) << e;
  scalelab::Batch empty;
  EXPECT_EQ(api_error([&] { model.train_batch(empty); }),
            "scalelab::Model::train_batch: the batch holds 0 labels and 0 floats, not a whole non-empty batch for "
            "trivial (784 floats per sample): fill it with Dataset::fill");
  scalelab::Model other("trivial", synthetic().train, 7);
  EXPECT_EQ(api_error([&] { scalelab::broadcast_from_rank0(other, sgd); }),
            "scalelab::broadcast_from_rank0: the optimizer belongs to another model: pass the model it was built for");
}

TEST(ApiMpi, ASecondRuntimeIsRefused) {
  try {
    scalelab::Runtime again;
    FAIL() << "no error";
  } catch (const scalelab::ApiError& e) {
    EXPECT_EQ(std::string(e.what()), "scalelab::Runtime: one is already alive: create exactly one per process");
    EXPECT_EQ(e.exit_code(), 2);
  }
}

}  // namespace

int main(int argc, char** argv) {
  scalelab::Runtime runtime;
  ::testing::InitGoogleTest(&argc, argv);
  if (scalelab::rank() != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  const int rc = RUN_ALL_TESTS() != 0 ? 1 : 0;
  return scalelab::sum_over_ranks(rc) > 0 ? 1 : 0;
}
