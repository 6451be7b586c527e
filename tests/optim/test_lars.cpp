// LARS against steps computed by hand: the trust ratio eta*||w||/(||g|| + wd*||w||) on weights,
// plain momentum SGD on the excluded bias, momentum carried into a second step, and the factory.
#include <cmath>
#include <vector>

#include <gtest/gtest.h>

#include "core/error.h"
#include "optim/factory.h"
#include "optim/lars.h"

namespace scalelab::optim {
namespace {

// A weight (2, 2) = [[3, 0], [0, 4]] (norm 5) with gradient [[0.3, 0], [0, 0.4]] (norm 0.5), and
// a bias [1, -1] with gradient [0.5, 0.5].
void fill(nn::ParameterSet& p) {
  p.add("dense.weight", nn::Shape{2, 2}, nn::ParamKind::weight);
  p.add("dense.bias", nn::Shape{2}, nn::ParamKind::bias);
  p.finalize();
  const float w[] = {3, 0, 0, 4, 1, -1};
  const float g[] = {0.3f, 0, 0, 0.4f, 0.5f, 0.5f};
  // Parameters start at aligned offsets: write each through its own pointer.
  std::copy(w, w + 4, p.value(0));
  std::copy(w + 4, w + 6, p.value(1));
  std::copy(g, g + 4, p.grad(0));
  std::copy(g + 4, g + 6, p.grad(1));
}

TEST(Lars, FirstStepScalesTheWeightStepByTheTrustRatioAndLeavesTheBiasPlain) {
  nn::ParameterSet p;
  fill(p);
  OptimizerOptions o;
  o.momentum = 0.9f;
  o.trust_coefficient = 0.001f;
  o.weight_decay = 0.01f;
  Lars lars(o);
  const float lr = 2.0f;
  lars.step(p, lr);
  // trust = 0.001 * 5 / (0.5 + 0.01 * 5) = 0.005 / 0.55
  const double trust = 0.005 / 0.55;
  EXPECT_NEAR(lars.last_trust_ratios()[0], trust, 1e-7);
  EXPECT_FLOAT_EQ(lars.last_trust_ratios()[1], 1.0f);
  // v = lr * trust * (g + wd * w); w -= v
  EXPECT_NEAR(p.value(0)[0], 3 - lr * trust * (0.3 + 0.01 * 3), 1e-6);
  EXPECT_NEAR(p.value(0)[1], 0.0, 1e-7);
  EXPECT_NEAR(p.value(0)[3], 4 - lr * trust * (0.4 + 0.01 * 4), 1e-6);
  // Bias: excluded, no weight decay, no trust ratio: b -= lr * g
  EXPECT_NEAR(p.value(1)[0], 1 - 2.0 * 0.5, 1e-6);
  EXPECT_NEAR(p.value(1)[1], -1 - 2.0 * 0.5, 1e-6);
  EXPECT_EQ(lars.step_count(), 1);
}

TEST(Lars, SecondStepCarriesMomentumAndRecomputesTheTrustRatio) {
  nn::ParameterSet p;
  fill(p);
  OptimizerOptions o;
  o.momentum = 0.9f;
  o.trust_coefficient = 0.02f;
  Lars lars(o);
  const double lr = 0.5;
  lars.step(p, float(lr));
  // Step 1 by hand: trust1 = 0.02 * 5 / 0.5 = 0.2; v1 = lr * 0.2 * g
  const double t1 = 0.2;
  double w0 = 3 - lr * t1 * 0.3, w3 = 4 - lr * t1 * 0.4;
  const double v0 = lr * t1 * 0.3, v3 = lr * t1 * 0.4;
  lars.step(p, float(lr));  // same gradient again
  const double t2 = 0.02 * std::sqrt(w0 * w0 + w3 * w3) / 0.5;
  EXPECT_NEAR(lars.last_trust_ratios()[0], t2, 1e-6);
  w0 -= 0.9 * v0 + lr * t2 * 0.3;
  w3 -= 0.9 * v3 + lr * t2 * 0.4;
  EXPECT_NEAR(p.value(0)[0], w0, 1e-6);
  EXPECT_NEAR(p.value(0)[3], w3, 1e-6);
  // Bias: momentum SGD, v2 = 0.9 * lr * g + lr * g
  EXPECT_NEAR(p.value(1)[0], 1 - lr * 0.5 - (0.9 * lr * 0.5 + lr * 0.5), 1e-6);
}

TEST(Lars, WithoutExclusionTheBiasGetsATrustRatioToo) {
  nn::ParameterSet p;
  fill(p);
  OptimizerOptions o;
  o.trust_coefficient = 0.001f;
  o.exclude_bias_and_norm = false;
  Lars lars(o);
  lars.step(p, 1.0f);
  // bias: ||b|| = sqrt 2, ||g|| = sqrt(0.5)  ->  trust = 0.001 * 2
  EXPECT_NEAR(lars.last_trust_ratios()[1], 0.002, 1e-8);
  EXPECT_NEAR(p.value(1)[0], 1 - 0.002 * 0.5, 1e-7);
}

TEST(Lars, ZeroWeightsTakeAPlainStep) {
  nn::ParameterSet p;
  p.add("w", nn::Shape{3}, nn::ParamKind::weight);
  p.finalize();
  std::fill(p.grads().begin(), p.grads().end(), 1.0f);
  Lars lars(OptimizerOptions{});
  lars.step(p, 0.1f);
  EXPECT_FLOAT_EQ(lars.last_trust_ratios()[0], 1.0f);
  EXPECT_NEAR(p.value(0)[0], -0.1, 1e-7);
}

TEST(Lars, MadeByNameAndChecksItsInputs) {
  auto opt = make_optimizer("lars", OptimizerOptions{});
  EXPECT_EQ(opt->name(), "lars");
  nn::ParameterSet p;
  fill(p);
  try {
    opt->step(p, 0.0f);
    FAIL() << "a zero learning rate must be refused";
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), 2);
  }
  OptimizerOptions bad;
  bad.trust_coefficient = 0.0f;
  EXPECT_THROW(Lars{bad}, Error);
}

}  // namespace
}  // namespace scalelab::optim
