// SGD and Adam steps against values computed by hand from PyTorch's update rules, the flat state
// layout, and the factory's usage errors.
#include <gtest/gtest.h>

#include <cmath>

#include "core/error.h"
#include "nn/parameter.h"
#include "optim/factory.h"

namespace scalelab::optim {
namespace {

// Two parameters: a weight w (2 floats) and a bias b (1 float).
struct Params {
  nn::ParameterSet set;
  Params() {
    set.add("w", nn::Shape{2}, nn::ParamKind::weight);
    set.add("b", nn::Shape{1}, nn::ParamKind::bias);
    set.finalize();
    set.value(0)[0] = 1.0f;
    set.value(0)[1] = -2.0f;
    set.value(1)[0] = 0.5f;
  }
  void grads(float g0, float g1, float g2) {
    set.grad(0)[0] = g0;
    set.grad(0)[1] = g1;
    set.grad(1)[0] = g2;
  }
};

TEST(Sgd, PlainStepIsPMinusLrTimesGrad) {
  OptimizerOptions o;
  o.momentum = 0;
  auto opt = make_optimizer("sgd", o);
  Params p;
  p.grads(0.5f, -1.0f, 2.0f);
  opt->step(p.set, 0.1f);
  EXPECT_FLOAT_EQ(p.set.value(0)[0], 1.0f - 0.1f * 0.5f);
  EXPECT_FLOAT_EQ(p.set.value(0)[1], -2.0f + 0.1f * 1.0f);
  EXPECT_FLOAT_EQ(p.set.value(1)[0], 0.5f - 0.1f * 2.0f);
  EXPECT_TRUE(opt->state().empty());
}

TEST(Sgd, MomentumAndWeightDecayOverTwoSteps) {
  OptimizerOptions o;
  o.momentum = 0.9f;
  o.weight_decay = 0.01f;
  auto opt = make_optimizer("sgd", o);
  Params p;
  // Step 1: g = 0.5 + 0.01*1 = 0.51; buf = 0.51; p = 1 - 0.1*0.51 = 0.949.
  p.grads(0.5f, 0, 0);
  opt->step(p.set, 0.1f);
  EXPECT_NEAR(p.set.value(0)[0], 0.949, 1e-6);
  // Step 2: g = 0.5 + 0.01*0.949 = 0.50949; buf = 0.9*0.51 + 0.50949 = 0.96849; p = 0.949 - 0.096849.
  opt->step(p.set, 0.1f);
  EXPECT_NEAR(p.set.value(0)[0], 0.949 - 0.1 * (0.9 * 0.51 + 0.50949), 1e-6);
  EXPECT_NEAR(opt->state()[p.set.info(0).offset], 0.9 * 0.51 + 0.50949, 1e-6);
  EXPECT_EQ(opt->step_count(), 2);
}

TEST(Sgd, NesterovUsesGradientPlusMomentumTimesBuffer) {
  OptimizerOptions o;
  o.momentum = 0.9f;
  o.nesterov = true;
  auto opt = make_optimizer("sgd", o);
  Params p;
  p.grads(1.0f, 0, 0);
  opt->step(p.set, 0.1f);  // buf = 1; update = 1 + 0.9*1 = 1.9
  EXPECT_NEAR(p.set.value(0)[0], 1.0 - 0.19, 1e-6);
  opt->step(p.set, 0.1f);  // buf = 0.9 + 1 = 1.9; update = 1 + 0.9*1.9 = 2.71
  EXPECT_NEAR(p.set.value(0)[0], 0.81 - 0.271, 1e-6);
}

TEST(Adam, ThreeStepsMatchTheBiasCorrectedFormula) {
  OptimizerOptions o;  // PyTorch defaults: 0.9, 0.999, 1e-8
  auto opt = make_optimizer("adam", o);
  Params p;
  const double g[3] = {0.3, -0.1, 0.2};
  double w = 1.0, m = 0, v = 0;
  for (int t = 1; t <= 3; ++t) {
    p.grads(static_cast<float>(g[t - 1]), 0, 0);
    opt->step(p.set, 0.01f);
    m = 0.9 * m + 0.1 * g[t - 1];
    v = 0.999 * v + 0.001 * g[t - 1] * g[t - 1];
    const double mh = m / (1 - std::pow(0.9, t)), vh = v / (1 - std::pow(0.999, t));
    w -= 0.01 * mh / (std::sqrt(vh) + 1e-8);
    EXPECT_NEAR(p.set.value(0)[0], w, 1e-6) << "step " << t;
  }
  // State: exp_avg then exp_avg_sq, each as long as the parameter buffer.
  ASSERT_EQ(opt->segments().size(), 2u);
  EXPECT_EQ(opt->segments()[1].name, "exp_avg_sq");
  EXPECT_NEAR(opt->state()[opt->segments()[0].offset], m, 1e-7);
  // 1 - 0.999f is 0.00100004 in float: the moment is off by ~4e-5 relative, by construction.
  EXPECT_NEAR(opt->state()[opt->segments()[1].offset], v, 1e-4 * v);
  EXPECT_EQ(opt->state().size(), 2 * p.set.size());
}

TEST(Adam, WeightDecayIsAddedToTheGradient) {
  OptimizerOptions o;
  o.weight_decay = 0.1f;
  auto opt = make_optimizer("adam", o);
  Params p;
  p.grads(0, 0, 0);  // the gradient is then wd * p alone: sign(p) moves toward zero by lr
  opt->step(p.set, 0.01f);
  EXPECT_NEAR(p.set.value(0)[0], 0.99, 1e-5);
  EXPECT_NEAR(p.set.value(0)[1], -1.99, 1e-5);
}

TEST(Optimizer, StepCountAndStateCanBeRestored) {
  auto a = make_optimizer("adam", {});
  auto b = make_optimizer("adam", {});
  Params pa, pb;
  pa.grads(0.3f, 0.2f, 0.1f);
  pb.grads(0.3f, 0.2f, 0.1f);
  a->step(pa.set, 0.01f);
  // Copy a's state and step count into b (what a checkpoint or a broadcast does), then step both.
  b->bind(pb.set);
  std::copy(a->state().begin(), a->state().end(), b->state().begin());
  b->set_step_count(a->step_count());
  std::copy(pa.set.values().begin(), pa.set.values().end(), pb.set.values().begin());
  a->step(pa.set, 0.01f);
  b->step(pb.set, 0.01f);
  for (std::size_t i = 0; i < pa.set.size(); ++i) EXPECT_EQ(pa.set.values()[i], pb.set.values()[i]);
}

TEST(Factory, UnknownNameIsAUsageErrorListingTheKnownOnes) {
  try {
    (void)make_optimizer("rmsprop", {});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), 2);
    EXPECT_NE(std::string(e.what()).find("sgd"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("adam"), std::string::npos);
  }
}

TEST(Factory, NonPositiveLearningRateIsAUsageError) {
  auto opt = make_optimizer("sgd", {});
  Params p;
  EXPECT_THROW(opt->step(p.set, 0.0f), Error);
  EXPECT_THROW(opt->step(p.set, -0.1f), Error);
  EXPECT_THROW(opt->step(p.set, NAN), Error);
}

}  // namespace
}  // namespace scalelab::optim
