// Learning-rate schedules: each part (scaling rule, warm-up, decay) against its formula written out
// in the test, their composition, and the bad inputs that must be usage errors (exit 2).
#include <cmath>
#include <numbers>

#include <gtest/gtest.h>

#include "core/error.h"
#include "optim/schedule.h"

namespace scalelab::optim {
namespace {

ScheduleConfig base_config() {
  ScheduleConfig c;
  c.base_lr = 0.1;
  c.reference_batch = 256;
  c.global_batch = 256;
  c.epochs = 10;
  c.steps_per_epoch = 100;
  return c;
}

TEST(Schedule, ConstantWithoutScalingIsTheBaseLrAtEveryStep) {
  LrSchedule s(base_config());
  EXPECT_EQ(s.total_steps(), 1000);
  for (long t : {0L, 1L, 500L, 999L}) EXPECT_DOUBLE_EQ(s.lr(t), 0.1);
}

TEST(Schedule, LinearScalingMultipliesByTheBatchRatio) {
  auto c = base_config();
  c.global_batch = 8192;  // Goyal et al.: lr = 0.1 * kn / 256
  c.scaling = ScalingRule::linear;
  LrSchedule s(c);
  EXPECT_DOUBLE_EQ(s.peak_lr(), 0.1 * 8192 / 256);
  EXPECT_DOUBLE_EQ(s.lr(0), 3.2);
}

TEST(Schedule, SqrtScalingMultipliesByTheRootOfTheBatchRatio) {
  auto c = base_config();
  c.global_batch = 4096;
  c.scaling = ScalingRule::sqrt;
  LrSchedule s(c);
  EXPECT_NEAR(s.peak_lr(), 0.1 * 4.0, 1e-12);  // sqrt(16) = 4
}

TEST(Schedule, GradualWarmupRampsLinearlyPerStepFromTheUnscaledLr) {
  auto c = base_config();
  c.global_batch = 256 * 8;
  c.scaling = ScalingRule::linear;
  c.warmup = WarmupKind::gradual;
  c.warmup_epochs = 2;  // 200 steps
  LrSchedule s(c);
  EXPECT_EQ(s.warmup_steps(), 200);
  const double peak = 0.8;
  for (long t : {0L, 1L, 50L, 199L}) {
    EXPECT_NEAR(s.lr(t), 0.1 + (peak - 0.1) * double(t) / 200.0, 1e-12) << "step " << t;
  }
  EXPECT_NEAR(s.lr(200), peak, 1e-12);
  EXPECT_NEAR(s.lr(999), peak, 1e-12);
  // Strictly increasing through the warm-up.
  for (long t = 1; t < 200; ++t) EXPECT_GT(s.lr(t), s.lr(t - 1));
}

TEST(Schedule, GradualWarmupFromAnExplicitStartLr) {
  auto c = base_config();
  c.warmup = WarmupKind::gradual;
  c.warmup_epochs = 1;
  c.warmup_start_lr = 0.001;
  LrSchedule s(c);
  EXPECT_DOUBLE_EQ(s.lr(0), 0.001);
  EXPECT_NEAR(s.lr(25), 0.001 + (0.1 - 0.001) * 25 / 100, 1e-12);
}

TEST(Schedule, ConstantWarmupHoldsTheStartLrThenJumps) {
  auto c = base_config();
  c.global_batch = 1024;
  c.scaling = ScalingRule::linear;
  c.warmup = WarmupKind::constant;
  c.warmup_epochs = 1.5;  // 150 steps
  LrSchedule s(c);
  EXPECT_DOUBLE_EQ(s.lr(0), 0.1);
  EXPECT_DOUBLE_EQ(s.lr(149), 0.1);
  EXPECT_DOUBLE_EQ(s.lr(150), 0.4);
}

TEST(Schedule, HorovodWarmupFollowsItsFormula) {
  // lr'(epoch) = lr/size * ((size-1)/warmup_epochs * epoch + 1), with lr the scaled peak.
  auto c = base_config();
  c.workers = 4;
  c.global_batch = 1024;
  c.scaling = ScalingRule::linear;
  c.warmup = WarmupKind::horovod;
  c.warmup_epochs = 5;
  LrSchedule s(c);
  const double lr = 0.4;
  const double size = 4;
  for (long t : {0L, 100L, 250L, 499L}) {
    const double epoch = double(t) / 100.0;
    EXPECT_NEAR(s.lr(t), lr / size * ((size - 1) / 5.0 * epoch + 1), 1e-12) << "step " << t;
  }
  EXPECT_NEAR(s.lr(500), lr, 1e-12);
  // Under linear scaling with ratio = workers it is the same ramp as gradual warm-up.
  c.warmup = WarmupKind::gradual;
  LrSchedule g(c);
  for (long t : {0L, 37L, 250L, 499L}) EXPECT_NEAR(s.lr(t), g.lr(t), 1e-12);
}

TEST(Schedule, StepDecayMultipliesByGammaAtEachMilestone) {
  auto c = base_config();
  c.decay = DecayKind::step;
  c.step_epochs = {3, 6};
  c.step_gamma = 0.1;
  LrSchedule s(c);
  EXPECT_DOUBLE_EQ(s.lr(299), 0.1);
  EXPECT_NEAR(s.lr(300), 0.01, 1e-15);
  EXPECT_NEAR(s.lr(599), 0.01, 1e-15);
  EXPECT_NEAR(s.lr(600), 0.001, 1e-15);
}

TEST(Schedule, CosineDecaysFromThePeakAfterWarmupToEndLr) {
  auto c = base_config();
  c.decay = DecayKind::cosine;
  c.warmup = WarmupKind::gradual;
  c.warmup_epochs = 2;
  c.warmup_start_lr = 0.01;
  c.end_lr = 0.001;
  LrSchedule s(c);
  const double span = 1000 - 200;
  for (long t : {200L, 400L, 600L, 999L}) {
    const double p = (t - 200) / span;
    EXPECT_NEAR(s.lr(t), 0.001 + (0.1 - 0.001) * 0.5 * (1 + std::cos(std::numbers::pi * p)), 1e-12);
  }
  EXPECT_NEAR(s.lr(600), (0.1 + 0.001) / 2, 1e-12);  // half-way: the mean of peak and end
}

TEST(Schedule, PolynomialDecayFollowsItsPower) {
  auto c = base_config();
  c.decay = DecayKind::polynomial;
  c.poly_power = 2.0;
  LrSchedule s(c);
  EXPECT_NEAR(s.lr(500), 0.1 * 0.25, 1e-12);
  EXPECT_NEAR(s.lr(0), 0.1, 1e-12);
}

TEST(Schedule, NotableStepsCoverTheWarmupAndTheEnd) {
  auto c = base_config();
  c.warmup = WarmupKind::gradual;
  c.warmup_epochs = 2;
  LrSchedule s(c);
  auto steps = s.notable_steps();
  EXPECT_EQ(steps.front(), 0);
  EXPECT_EQ(steps.back(), 999);
  EXPECT_NE(std::find(steps.begin(), steps.end(), 200), steps.end());
  EXPECT_TRUE(std::is_sorted(steps.begin(), steps.end()));
  EXPECT_NE(s.table().find("gradual"), std::string::npos);
  auto j = s.to_json();
  EXPECT_EQ(j["warmup_steps"], 200);
  EXPECT_EQ(j["points"].size(), steps.size());
}

void expect_usage_error(const ScheduleConfig& c, const std::string& fragment) {
  try {
    LrSchedule s(c);
    FAIL() << "expected a usage error mentioning '" << fragment << "'";
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), 2);
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

TEST(Schedule, BadInputsAreUsageErrors) {
  auto c = base_config();
  c.base_lr = 0.0;
  expect_usage_error(c, "positive");
  c.base_lr = -0.1;
  expect_usage_error(c, "positive");
  c = base_config();
  c.warmup = WarmupKind::gradual;
  c.warmup_epochs = 11;
  expect_usage_error(c, "longer than training");
  c = base_config();
  c.decay = DecayKind::step;
  expect_usage_error(c, "milestone");
  c.step_epochs = {12};
  expect_usage_error(c, "outside");
  c = base_config();
  c.warmup = WarmupKind::gradual;
  c.warmup_epochs = 1;
  c.warmup_start_lr = 0.0;
  expect_usage_error(c, "positive lr");
  c = base_config();
  c.step_gamma = 1.5;
  expect_usage_error(c, "(0, 1]");
  c = base_config();
  c.warmup_epochs = std::nan("");
  expect_usage_error(c, "warm-up length");
}

TEST(Schedule, ErrorsNameTheFieldAtFault) {
  auto c = base_config();
  c.base_lr = -1;
  try {
    c.validate();
    FAIL() << "lr -1 accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.parameter(), "base_lr");
    EXPECT_EQ(std::string(e.what()), "base_lr -1: the learning rate must be a positive finite number; try 0.1");
  }
  try {
    (void)parse_warmup_kind("sudden");
    FAIL() << "sudden accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.parameter(), "warmup");
  }
}

TEST(Schedule, UnknownNamesListTheValidOnes) {
  EXPECT_EQ(parse_decay_kind("cosine"), DecayKind::cosine);
  EXPECT_EQ(parse_warmup_kind("horovod"), WarmupKind::horovod);
  EXPECT_EQ(parse_scaling_rule("sqrt"), ScalingRule::sqrt);
  try {
    (void)parse_decay_kind("exponential");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), 2);
    EXPECT_NE(std::string(e.what()).find("cosine"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("exponential"), std::string::npos);
  }
}

}  // namespace
}  // namespace scalelab::optim
