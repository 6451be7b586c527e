// BatchNorm: normalisation and running statistics against their formulas, gradients against
// finite differences (2d and 1d), and the SyncBatchNorm hook: a reducer that doubles every sum
// behaves exactly like a batch holding the local one twice (what two ranks with the same data see).
#include <gtest/gtest.h>

#include "grad_check.h"
#include "nn/batch_norm.h"

namespace scalelab::nn {
namespace {

TEST(BatchNorm, TrainingNormalisesPerChannelAndUpdatesRunningStatistics) {
  BatchNorm bn(0.1f, 1e-5f);
  testing::LayerHarness h(bn, Shape{2, 3, 3}, 4);
  // Initial running statistics (mean 0, var 1) are restored: the harness ran no forward yet.
  h.loss();
  const float* gamma = h.params.value(0);
  const float* beta = h.params.value(1);
  for (std::size_t c = 0; c < 2; ++c) {
    double s = 0, s2 = 0;
    for (std::size_t n = 0; n < 4; ++n)
      for (std::size_t i = 0; i < 9; ++i) s += h.in.data()[(n * 2 + c) * 9 + i];
    const double mean = s / 36;
    for (std::size_t n = 0; n < 4; ++n)
      for (std::size_t i = 0; i < 9; ++i) s2 += std::pow(h.in.data()[(n * 2 + c) * 9 + i] - mean, 2);
    const double var = s2 / 36;
    for (std::size_t n = 0; n < 4; ++n)
      for (std::size_t i = 0; i < 9; ++i) {
        const std::size_t at = (n * 2 + c) * 9 + i;
        EXPECT_NEAR(h.out.data()[at], gamma[c] * (h.in.data()[at] - mean) / std::sqrt(var + 1e-5) + beta[c], 1e-4);
      }
    EXPECT_NEAR(h.params.state()[c], 0.1 * mean, 1e-5);                      // running mean
    EXPECT_NEAR(h.params.state()[2 + c], 0.9 + 0.1 * var * 36 / 35, 1e-5);  // running var, unbiased
  }
}

TEST(BatchNorm, EvaluationUsesTheRunningStatistics) {
  BatchNorm bn;
  testing::LayerHarness h(bn, Shape{3}, 5);
  h.training = false;
  h.params.state()[0] = 0.5f;   // running mean, channel 0
  h.params.state()[3] = 4.0f;   // running var, channel 0
  h.loss();
  const float expect = h.params.value(0)[0] * (h.in.data()[0] - 0.5f) / std::sqrt(4.0f + 1e-5f) + h.params.value(1)[0];
  EXPECT_NEAR(h.out.data()[0], expect, 1e-5);
}

TEST(BatchNorm, GradientsMatchFiniteDifferences2dAnd1d) {
  for (Shape s : {Shape{3, 4, 4}, Shape{5}}) {
    BatchNorm bn;
    testing::LayerHarness h(bn, s, 6);
    EXPECT_LT(h.input_error(1e-2f), 5e-3) << s.str();
    EXPECT_LT(h.worst_param_error(1e-2f), 5e-3) << s.str();
  }
}

TEST(BatchNorm, EvaluationModeGradientMatchesFiniteDifferences) {
  BatchNorm bn;
  testing::LayerHarness h(bn, Shape{2, 3, 3}, 3);
  h.training = false;
  EXPECT_LT(h.input_error(), 2e-3);
  EXPECT_LT(h.worst_param_error(), 2e-3);
}

TEST(BatchNorm, ReducerDoublingTheSumsEqualsTheBatchTwice) {
  const Shape s{2, 3, 3};
  const std::size_t n = 3, per = s.numel();
  BatchNorm synced, plain;
  testing::LayerHarness a(synced, s, n, 5), b(plain, s, 2 * n, 5);
  std::size_t forward_calls = 0, backward_calls = 0;
  synced.set_statistics_reducer([&](float* sums, std::size_t count) {
    (count == 2 * 2 + 1 ? forward_calls : backward_calls) += 1;
    for (std::size_t i = 0; i < count; ++i) sums[i] *= 2.0f;
  });
  // The plain layer sees the synced layer's batch twice, with the same output gradient.
  for (std::size_t i = 0; i < n * per; ++i) {
    b.in.data()[i] = b.in.data()[n * per + i] = a.in.data()[i];
    b.r.data()[i] = b.r.data()[n * per + i] = a.r.data()[i];
  }
  std::copy_n(a.params.values().data(), a.params.size(), b.params.values().data());
  a.backward();
  b.backward();
  EXPECT_EQ(forward_calls, 1u);
  EXPECT_EQ(backward_calls, 1u);
  for (std::size_t i = 0; i < n * per; ++i) {
    EXPECT_NEAR(a.out.data()[i], b.out.data()[i], 1e-5);
    EXPECT_NEAR(a.din.data()[i], b.din.data()[i], 1e-5);
  }
  // Parameter gradients stay local: half of the doubled batch's.
  for (std::size_t i = 0; i < a.params.size(); ++i) EXPECT_NEAR(2 * a.params.grads()[i], b.params.grads()[i], 1e-4);
  // Running statistics come from the global (doubled) batch.
  for (std::size_t i = 0; i < a.params.state().size(); ++i) EXPECT_NEAR(a.params.state()[i], b.params.state()[i], 1e-5);
}

TEST(BatchNorm, DeclaresNormKindsAndRunningState) {
  BatchNorm bn;
  testing::LayerHarness h(bn, Shape{4, 2, 2}, 1);
  EXPECT_EQ(h.params.info(0).kind, ParamKind::norm_scale);
  EXPECT_EQ(h.params.info(1).kind, ParamKind::norm_shift);
  EXPECT_EQ(h.params.state().size(), 8u);
}

}  // namespace
}  // namespace scalelab::nn
