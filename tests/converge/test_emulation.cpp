// Large global batches on a small machine: k workers emulated by k micro-batches accumulated per
// optimizer step (backward_passes_per_step) give the same parameters as k real ranks. With the
// DistributedSampler layout (rank r takes positions r, r+k, ...) both see the same 2b samples at
// each step, and the averaged gradient is the mean over them either way; the model has no
// dropout, so the runs agree up to float rounding.
#include <algorithm>
#include <cmath>
#include <vector>

#include <gtest/gtest.h>

#include "comm/local.h"
#include "train/trainer.h"

namespace scalelab {
namespace {

train::TrainConfig small_config(const std::string& optimizer) {
  train::TrainConfig c;
  c.model = "mlp";
  c.dataset.name = "synthetic";
  c.dataset.synthetic_train = 1024;
  c.dataset.synthetic_test = 64;
  c.epochs = 2;
  c.batch_size = 16;
  c.max_steps = 12;
  c.lr = optimizer == "lamb" ? 0.01 : 0.05;
  c.optimizer = optimizer;
  c.optimizer_options.momentum = 0.9f;
  c.evaluate = false;
  c.verbose = false;
  c.seed = 5;
  return c;
}

std::vector<float> train_params(int ranks, int passes, const std::string& optimizer) {
  std::vector<float> out;
  comm::run_local(ranks, [&](comm::Communicator& comm) {
    auto c = small_config(optimizer);
    c.backward_passes_per_step = passes;
    train::Trainer t(c, comm);
    (void)t.run();
    if (comm.rank() == 0) {
      auto v = t.model().parameters().values();
      out.assign(v.begin(), v.end());
    }
  });
  return out;
}

void expect_same(const std::string& optimizer) {
  const auto real = train_params(2, 1, optimizer);      // 2 ranks x batch 16
  const auto emulated = train_params(1, 2, optimizer);  // 1 rank x 2 micro-batches of 16
  const auto single = train_params(1, 1, optimizer);    // global batch 16: a different run
  ASSERT_EQ(real.size(), emulated.size());
  double max_diff = 0, max_single_diff = 0, max_abs = 0;
  for (std::size_t i = 0; i < real.size(); ++i) {
    max_diff = std::max(max_diff, double(std::fabs(real[i] - emulated[i])));
    max_single_diff = std::max(max_single_diff, double(std::fabs(real[i] - single[i])));
    max_abs = std::max(max_abs, double(std::fabs(real[i])));
  }
  EXPECT_LT(max_diff, 1e-4 * std::max(1.0, max_abs)) << optimizer << ": emulation and real ranks disagree";
  // The comparison has teeth: a genuinely different global batch moves the parameters far more.
  EXPECT_GT(max_single_diff, 100 * max_diff) << optimizer;
}

TEST(Emulation, TwoAccumulatedMicroBatchesMatchTwoRanksWithSgd) { expect_same("sgd"); }
TEST(Emulation, TwoAccumulatedMicroBatchesMatchTwoRanksWithLamb) { expect_same("lamb"); }

}  // namespace
}  // namespace scalelab
