// LAMB against steps computed by hand: Adam moments with bias correction, the trust ratio
// ||w||/||r|| on weights, decoupled weight decay, an Adam step on the excluded bias.
#include <cmath>
#include <vector>

#include <gtest/gtest.h>

#include "core/error.h"
#include "optim/factory.h"
#include "optim/lamb.h"

namespace scalelab::optim {
namespace {

void fill(nn::ParameterSet& p) {
  p.add("dense.weight", nn::Shape{2, 2}, nn::ParamKind::weight);
  p.add("bn.gamma", nn::Shape{2}, nn::ParamKind::norm_scale);
  p.finalize();
  const float w[] = {3, 0, 0, 4, 1, -1};
  const float g[] = {0.3f, 0, 0, -0.4f, 0.5f, -0.25f};
  // Parameters start at aligned offsets: write each through its own pointer.
  std::copy(w, w + 4, p.value(0));
  std::copy(w + 4, w + 6, p.value(1));
  std::copy(g, g + 4, p.grad(0));
  std::copy(g + 4, g + 6, p.grad(1));
}

TEST(Lamb, FirstStepIsTheSignOfTheGradientScaledByTheTrustRatio) {
  nn::ParameterSet p;
  fill(p);
  OptimizerOptions o;
  o.eps = 1e-6f;
  Lamb lamb(o);
  const double lr = 0.01;
  lamb.step(p, float(lr));
  // Step 1: m^ = g and v^ = g^2 after bias correction, so r = g / (|g| + eps).
  const double eps = 1e-6;
  const double r0 = 0.3 / (0.3 + eps), r3 = -0.4 / (0.4 + eps);
  const double trust = 5.0 / std::sqrt(r0 * r0 + r3 * r3);  // ||w|| / ||r||, about 5 / sqrt 2
  EXPECT_NEAR(lamb.last_trust_ratios()[0], trust, 1e-5);
  EXPECT_NEAR(p.value(0)[0], 3 - lr * trust * r0, 1e-5);
  EXPECT_NEAR(p.value(0)[1], 0.0, 1e-7);  // zero gradient: r = 0
  EXPECT_NEAR(p.value(0)[3], 4 - lr * trust * r3, 1e-5);
  // The norm scale is excluded: an Adam step of size lr.
  EXPECT_FLOAT_EQ(lamb.last_trust_ratios()[1], 1.0f);
  EXPECT_NEAR(p.value(1)[0], 1 - lr * 0.5 / (0.5 + eps), 1e-6);
  EXPECT_NEAR(p.value(1)[1], -1 + lr * 0.25 / (0.25 + eps), 1e-6);
}

TEST(Lamb, SecondStepUsesBiasCorrectedMomentsAndDecoupledWeightDecay) {
  nn::ParameterSet p;
  fill(p);
  OptimizerOptions o;
  o.beta1 = 0.9f;
  o.beta2 = 0.999f;
  o.eps = 1e-6f;
  o.weight_decay = 0.1f;
  Lamb lamb(o);
  const double lr = 0.05, b1 = 0.9, b2 = 0.999, eps = 1e-6, wd = 0.1;
  std::vector<double> w = {3, 0, 0, 4};
  const std::vector<double> g1 = {0.3, 0, 0, -0.4};
  const std::vector<double> g2 = {0.1, 0.2, 0, 0.2};
  std::vector<double> m(4, 0.0), v(4, 0.0);
  for (int t = 1; t <= 2; ++t) {
    const auto& g = t == 1 ? g1 : g2;
    for (int i = 0; i < 4; ++i) p.grad(0)[i] = float(g[std::size_t(i)]);
    lamb.step(p, float(lr));
    // By hand:
    std::vector<double> r(4);
    double wn = 0, rn = 0;
    for (std::size_t i = 0; i < 4; ++i) {
      m[i] = b1 * m[i] + (1 - b1) * g[i];
      v[i] = b2 * v[i] + (1 - b2) * g[i] * g[i];
      const double mh = m[i] / (1 - std::pow(b1, t)), vh = v[i] / (1 - std::pow(b2, t));
      r[i] = mh / (std::sqrt(vh) + eps) + wd * w[i];
      wn += w[i] * w[i];
      rn += r[i] * r[i];
    }
    const double trust = std::sqrt(wn) / std::sqrt(rn);
    for (std::size_t i = 0; i < 4; ++i) w[i] -= lr * trust * r[i];
    EXPECT_NEAR(lamb.last_trust_ratios()[0], trust, 1e-4 * trust) << "step " << t;
    for (std::size_t i = 0; i < 4; ++i) EXPECT_NEAR(p.value(0)[i], w[i], 1e-5) << "step " << t << " i " << i;
  }
  EXPECT_EQ(lamb.step_count(), 2);
  ASSERT_EQ(lamb.segments().size(), 2u);
  EXPECT_EQ(lamb.segments()[0].name, "exp_avg");
  EXPECT_NEAR(lamb.state()[0], m[0], 1e-6);
}

TEST(Lamb, MadeByNameAndRefusesBadBetas) {
  EXPECT_EQ(make_optimizer("lamb", OptimizerOptions{})->name(), "lamb");
  OptimizerOptions bad;
  bad.beta2 = 1.0f;
  try {
    Lamb lamb(bad);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), 2);
  }
}

}  // namespace
}  // namespace scalelab::optim
