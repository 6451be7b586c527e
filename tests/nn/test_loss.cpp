// Softmax cross-entropy: value against the formula, the gradient against finite differences,
// the count of correct predictions, stability with huge logits, and bad labels.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "grad_check.h"
#include "nn/loss.h"

namespace scalelab::nn {
namespace {

TEST(SoftmaxCrossEntropy, ValueIsTheMeanNegativeLogSoftmax) {
  Tensor z(Shape{2, 3});
  const float v[] = {1.0f, 2.0f, 3.0f, -1.0f, 0.5f, 0.0f};
  std::copy(v, v + 6, z.data());
  std::vector<std::int32_t> y = {2, 0};
  auto r = softmax_cross_entropy(z.view(), y);
  const double l0 = -std::log(std::exp(3.0) / (std::exp(1.0) + std::exp(2.0) + std::exp(3.0)));
  const double l1 = -std::log(std::exp(-1.0) / (std::exp(-1.0) + std::exp(0.5) + std::exp(0.0)));
  EXPECT_NEAR(r.loss, (l0 + l1) / 2, 1e-6);
  EXPECT_EQ(r.correct, 1u);  // sample 0 right (argmax 2), sample 1 wrong (argmax 1)
}

TEST(SoftmaxCrossEntropy, GradientMatchesFiniteDifferencesAndScales) {
  Rng rng(9);
  Tensor z(Shape{4, 5}), d(Shape{4, 5});
  testing::fill_normal(z.data(), z.numel(), rng, 2.0f);
  std::vector<std::uint8_t> y = {0, 4, 2, 2};
  softmax_cross_entropy(z.view(), y, d.view(), 0.5f);
  std::vector<float> analytic(d.data(), d.data() + d.numel());
  for (float& a : analytic) a *= 2.0f;  // undo grad_scale 0.5
  auto loss = [&] { return softmax_cross_entropy(z.view(), y).loss; };
  EXPECT_LT(testing::gradient_error(loss, z.data(), z.numel(), analytic.data(), 1e-3f), 1e-3);
}

TEST(SoftmaxCrossEntropy, HugeLogitsStayFinite) {
  Tensor z(Shape{1, 2});
  z.data()[0] = 1e4f;
  z.data()[1] = -1e4f;
  std::vector<std::int32_t> y = {1};
  auto r = softmax_cross_entropy(z.view(), y);
  EXPECT_NEAR(r.loss, 2e4, 1.0);
}

TEST(SoftmaxCrossEntropy, LabelOutOfRangeIsAnInputError) {
  Tensor z(Shape{1, 3});
  std::vector<std::int32_t> y = {3};
  try {
    (void)softmax_cross_entropy(z.view(), y);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), 2);
  }
}

}  // namespace
}  // namespace scalelab::nn
