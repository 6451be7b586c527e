// Dense, ReLU, Flatten, GlobalAveragePooling2D and Dropout: forward semantics and backward
// against finite differences (MaxPooling2D: test_maxpool2d.cpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "grad_check.h"
#include "nn/dense.h"
#include "nn/dropout.h"
#include "nn/flatten.h"
#include "nn/global_avg_pool.h"
#include "nn/relu.h"

namespace scalelab::nn {
namespace {

TEST(Dense, ForwardIsXWTransposePlusBias) {
  Dense d(3, Activation::none);
  testing::LayerHarness h(d, Shape{4}, 2);
  h.loss();
  for (std::size_t n = 0; n < 2; ++n)
    for (std::size_t u = 0; u < 3; ++u) {
      double s = h.params.value(1)[u];
      for (std::size_t i = 0; i < 4; ++i) s += double(h.params.value(0)[u * 4 + i]) * h.in.data()[n * 4 + i];
      EXPECT_NEAR(h.out.data()[n * 3 + u], s, 1e-5);
    }
}

TEST(Dense, GradientsMatchFiniteDifferencesWithAndWithoutReLU) {
  testing::SkipKinks kinks;
  for (Activation act : {Activation::none, Activation::relu}) {
    Dense d(5, act);
    testing::LayerHarness h(d, Shape{7}, 4);
    EXPECT_LT(h.input_error(), 2e-3) << activation_name(act);
    EXPECT_LT(h.worst_param_error(), 2e-3) << activation_name(act);
  }
}

TEST(ReLU, GradientMatchesFiniteDifferencesAwayFromZero) {
  ReLU r;
  testing::LayerHarness h(r, Shape{3, 4, 4}, 2);
  // Keep every input at least 0.05 from the kink, farther than the step 1e-2.
  for (std::size_t i = 0; i < h.in.numel(); ++i) {
    float& x = h.in.data()[i];
    if (std::abs(x) < 0.05f) x = x < 0 ? -0.05f : 0.05f;
  }
  EXPECT_LT(h.input_error(), 1e-3);
}

TEST(Flatten, KeepsNCHWOrderAndPassesGradientsThrough) {
  Flatten f;
  EXPECT_TRUE(f.aliases_input());
  EXPECT_EQ(f.output_shape(Shape{3, 4, 5}), Shape{60});
  testing::LayerHarness h(f, Shape{3, 4, 5}, 2);
  EXPECT_LT(h.input_error(), 1e-3);
}

TEST(GlobalAvgPool, GradientMatchesFiniteDifferences) {
  GlobalAvgPool g;
  testing::LayerHarness h(g, Shape{3, 4, 5}, 2);
  h.loss();
  double s = 0;
  for (std::size_t i = 0; i < 20; ++i) s += h.in.data()[20 + i];  // sample 0, channel 1
  EXPECT_NEAR(h.out.data()[1], s / 20, 1e-5);
  EXPECT_LT(h.input_error(), 1e-3);
}

TEST(Dropout, EvaluationIsTheIdentity) {
  Dropout d(0.5f);
  testing::LayerHarness h(d, Shape{10}, 3);
  h.training = false;
  h.loss();
  for (std::size_t i = 0; i < h.in.numel(); ++i) EXPECT_EQ(h.out.data()[i], h.in.data()[i]);
}

TEST(Dropout, KeepsAboutOneMinusRateAndScalesTheKeptUnits) {
  const float rate = 0.25f;
  Dropout d(rate);
  testing::LayerHarness h(d, Shape{4000}, 5);
  h.loss();
  std::size_t kept = 0;
  for (std::size_t i = 0; i < h.in.numel(); ++i) {
    float o = h.out.data()[i], x = h.in.data()[i];
    if (o != 0.0f) {
      ++kept;
      EXPECT_NEAR(o, x / (1 - rate), 1e-5f * (1 + std::abs(x)));
    }
  }
  // 20000 Bernoulli(0.75) draws: standard deviation ~61, so +-400 is far outside chance.
  EXPECT_NEAR(double(kept), 0.75 * 20000, 400);
}

TEST(Dropout, SameSeedSameMaskAndBackwardUsesTheMask) {
  Dropout d(0.5f);
  testing::LayerHarness h(d, Shape{50}, 4);
  h.before_forward = [&d] { d.reseed(42, 3); };
  h.loss();
  std::vector<float> first(h.out.data(), h.out.data() + h.out.numel());
  h.loss();
  EXPECT_TRUE(std::equal(first.begin(), first.end(), h.out.data()));
  d.reseed(42, 4);  // another stream (another rank): another mask
  d.forward(h.in.view(), h.out.view(), true);
  EXPECT_FALSE(std::equal(first.begin(), first.end(), h.out.data()));
  EXPECT_LT(h.input_error(), 1e-3);
}

// 67 elements: whole words of 64 mask bits, a partial one and a partial group of four draws.
// Dropped units are the input times 0 (negative inputs give -0), kept ones times 1/(1 - rate),
// and backward drops and scales the same units.
TEST(Dropout, EveryElementIsMaskedAndBackwardRepeatsTheMask) {
  const float rate = 0.5f, scale = 1.0f / (1.0f - rate);
  Dropout d(rate);
  testing::LayerHarness h(d, Shape{67}, 1);
  for (std::size_t i = 0; i < 67; ++i) h.in.data()[i] = -1.0f - static_cast<float>(i);
  h.r.fill(1.0f);
  h.backward();
  std::size_t kept = 0;
  for (std::size_t i = 0; i < 67; ++i) {
    const float x = h.in.data()[i], y = h.out.data()[i], g = h.din.data()[i];
    if (y == 0.0f) {
      EXPECT_TRUE(std::signbit(y)) << "element " << i << ": a dropped negative input is -0";
      EXPECT_EQ(g, 0.0f) << "element " << i;
    } else {
      ++kept;
      EXPECT_EQ(y, x * scale) << "element " << i;
      EXPECT_EQ(g, scale) << "element " << i;
    }
  }
  EXPECT_GT(kept, 10u);
  EXPECT_LT(kept, 57u);
}

// The mask is the documented one (dropout.h): a key from the layer's Rng, then four 16-bit draws
// per splitmix64 hash of key + golden * (group + 1), kept when >= rate * 65536. Written out here
// so that the vector path and the plain one (and the GPU twin, which draws the same keys) agree.
TEST(Dropout, MaskFollowsTheCounterBasedHash) {
  for (float rate : {0.25f, 0.5f, 0.1f}) {
    Dropout d(rate);
    testing::LayerHarness h(d, Shape{300}, 1);
    for (std::size_t i = 0; i < 300; ++i) h.in.data()[i] = 1.0f + static_cast<float>(i);
    d.reseed(42, 3);
    d.forward(h.in.view(), h.out.view(), true);
    const std::uint64_t key = Rng(42, 3).next_u64();
    const auto threshold = static_cast<std::uint32_t>(std::lround(double(rate) * 65536.0));
    for (std::size_t i = 0; i < 300; ++i) {
      std::uint64_t z = key + 0x9E3779B97F4A7C15ull * (i / 4 + 1);
      z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
      z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
      z ^= z >> 31;
      const bool keep = ((z >> (16 * (i % 4))) & 0xFFFFu) >= threshold;
      EXPECT_EQ(h.out.data()[i] != 0.0f, keep) << "rate " << rate << ", element " << i;
    }
  }
}

TEST(Dropout, RateOutsideZeroOneIsAUsageError) {
  EXPECT_THROW(Dropout(1.0f), Error);
  EXPECT_THROW(Dropout(-0.1f), Error);
}

}  // namespace
}  // namespace scalelab::nn
