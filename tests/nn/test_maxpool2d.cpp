// MaxPooling2D: forward semantics, the gradient routed to each window's maximum (with and without
// the fused ReLU's mask), on the shapes that take each vector path's full blocks and tails. Built
// twice: into test_nn_layers against the native build of lib/nn, and into test_nn_kernels_avx2
// against the AVX2 paths (kernels_avx2.cpp), so that both run on a CPU with AVX-512.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>

#include "grad_check.h"
#include "nn/maxpool2d.h"

namespace scalelab::nn {
namespace {

// The inputs 0.1 x (k - offset) for k = 0 .. n-1 in a shuffled order: distinct values 0.1 apart, so
// no window has a tie and a step of 1e-2 never changes which one is largest.
void distinct_inputs(testing::LayerHarness& h, std::uint64_t seed, float offset = 0.0f) {
  std::vector<float> v(h.in.numel());
  std::iota(v.begin(), v.end(), 0.0f);
  Rng rng(seed);
  std::shuffle(v.begin(), v.end(), rng.engine());
  for (std::size_t i = 0; i < v.size(); ++i) h.in.data()[i] = 0.1f * (v[i] - offset);
}

// Both paths: the exact 2x2 tiling (even sizes, the cnn's) and the general one (an odd width).
TEST(MaxPool2D, TakesTheWindowMaximumAndRoutesTheGradientThere) {
  for (Shape s : {Shape{2, 6, 5}, Shape{3, 4, 6}}) {
    MaxPool2D p(2);
    testing::LayerHarness h(p, s, 2);
    distinct_inputs(h, 3);
    const std::size_t H = s[1], W = s[2], ho = H / 2, wo = W / 2, planes = 2 * s[0];
    EXPECT_EQ(p.output_shape(s), (Shape{s[0], ho, wo}));
    h.loss();
    const float* x = h.in.data();
    for (std::size_t pl = 0; pl < planes; ++pl)
      for (std::size_t oh = 0; oh < ho; ++oh)
        for (std::size_t ow = 0; ow < wo; ++ow) {
          float m = -1e30f;
          for (std::size_t i = 0; i < 2; ++i)
            for (std::size_t j = 0; j < 2; ++j) m = std::max(m, x[pl * H * W + (2 * oh + i) * W + 2 * ow + j]);
          EXPECT_EQ(h.out.data()[pl * ho * wo + oh * wo + ow], m) << s.str();
        }
    EXPECT_LT(h.input_error(), 1e-3) << s.str();
  }
}

// Planes wide enough for the vector paths' full blocks (16 windows with AVX-512, 8 with AVX2) and
// their tails (wo = 20 and 7), and rows whose last block is written with plain stores that run
// past their row (wo = 12, the cnn's; wo = 4, where what runs past a row pair reaches two pairs on): every input position
// holds the window's gradient exactly where the forward pass found the window's maximum, and 0
// elsewhere.
TEST(MaxPool2D, WidePlanesRouteEachWindowsGradientToItsMaximum) {
  for (Shape s : {Shape{3, 8, 40}, Shape{2, 6, 14}, Shape{2, 24, 24}, Shape{3, 12, 8}}) {
    MaxPool2D p(2);
    testing::LayerHarness h(p, s, 2);
    distinct_inputs(h, 11);
    for (std::size_t i = 0; i < h.r.numel(); ++i) h.r.data()[i] = 1.0f + static_cast<float>(i);
    h.din.fill(7.0f);  // every position must be written
    h.backward();
    const std::size_t H = s[1], W = s[2], ho = H / 2, wo = W / 2, planes = 2 * s[0];
    const float* x = h.in.data();
    for (std::size_t pl = 0; pl < planes; ++pl)
      for (std::size_t oh = 0; oh < ho; ++oh)
        for (std::size_t ow = 0; ow < wo; ++ow) {
          std::size_t best = pl * H * W + 2 * oh * W + 2 * ow;
          for (std::size_t i = 0; i < 2; ++i)
            for (std::size_t j = 0; j < 2; ++j) {
              const std::size_t at = pl * H * W + (2 * oh + i) * W + 2 * ow + j;
              if (x[at] > x[best]) best = at;
            }
          ASSERT_EQ(h.out.data()[pl * ho * wo + oh * wo + ow], x[best]) << s.str();
          for (std::size_t i = 0; i < 2; ++i)
            for (std::size_t j = 0; j < 2; ++j) {
              const std::size_t at = pl * H * W + (2 * oh + i) * W + 2 * ow + j;
              EXPECT_EQ(h.din.data()[at], at == best ? h.r.data()[pl * ho * wo + oh * wo + ow] : 0.0f) << s.str() << " at " << at;
            }
        }
  }
}

// Without reserve(), or with a batch larger than the one reserved, forward keeps the places of
// every window (it wrote past them before; the sanitizer build would catch it).
TEST(MaxPool2D, WorksWithoutReserveAndBeyondTheReservedBatch) {
  MaxPool2D p(2);
  const Shape s{2, 4, 6};
  for (std::size_t batch : {3u, 5u}) {
    Tensor in(Shape{batch, 2, 4, 6}), out(Shape{batch, 2, 2, 3}), dout(out.shape()), din(in.shape());
    for (std::size_t i = 0; i < in.numel(); ++i) in.data()[i] = static_cast<float>((i * 7) % 11);
    dout.fill(1.0f);
    p.forward(in.view(), out.view(), true);
    p.backward(in.view(), out.view(), dout.view(), din.view());
    float routed = 0;
    for (std::size_t i = 0; i < din.numel(); ++i) routed += din.data()[i];
    EXPECT_EQ(routed, static_cast<float>(out.numel())) << "batch " << batch;  // one gradient per window
    if (batch == 3) p.reserve(s, 3);
  }
}

TEST(MaxPool2D, PoolSizesOutsideOneTo255AreUsageErrors) {
  EXPECT_THROW(MaxPool2D(0), Error);
  EXPECT_THROW(MaxPool2D(256), Error);  // a window's places must fit in 16 bits
  EXPECT_NO_THROW(MaxPool2D(255));
}

TEST(MaxPool2D, TiesSendTheGradientToTheFirstMaximumOnly) {
  for (Shape s : {Shape{1, 2, 3}, Shape{1, 2, 2}}) {
    MaxPool2D p(2);
    testing::LayerHarness h(p, s, 1);
    h.in.fill(1.0f);
    h.r.fill(2.0f);
    h.backward();
    EXPECT_EQ(h.din.data()[0], 2.0f) << s.str();
    for (std::size_t i = 1; i < h.din.numel(); ++i) EXPECT_EQ(h.din.data()[i], 0.0f) << s.str();
  }
}

// The fused ReLU's mask (Model::build sets it when a ReLU convolution feeds the pool): backward
// gives exactly the unmasked gradient where the window's maximum is positive and 0 where it is
// not (a negative, zero or NaN maximum), on planes of every width class of the vector paths.
TEST(MaxPool2D, TheFusedReLUMaskZeroesTheGradientOfWindowsWithoutAPositiveMaximum) {
  for (Shape s : {Shape{3, 8, 40}, Shape{2, 6, 14}, Shape{2, 24, 24}, Shape{3, 12, 8}, Shape{2, 4, 26}, Shape{1, 6, 18}}) {
    MaxPool2D plain(2), masked(2);
    masked.set_applies_relu_mask(true);
    testing::LayerHarness a(plain, s, 2), b(masked, s, 2);
    distinct_inputs(a, 5, 0.8f * static_cast<float>(a.in.numel()));  // 80% negative
    std::copy_n(a.in.data(), a.in.numel(), b.in.data());
    a.in.data()[3] = b.in.data()[3] = std::nanf("");
    for (std::size_t i = 0; i < a.r.numel(); ++i) a.r.data()[i] = b.r.data()[i] = 1.0f + static_cast<float>(i);
    a.din.fill(7.0f);
    b.din.fill(7.0f);
    a.backward();
    b.backward();
    const std::size_t H = s[1], W = s[2], ho = H / 2, wo = W / 2, planes = 2 * s[0];
    std::size_t dead = 0;
    for (std::size_t pl = 0; pl < planes; ++pl)
      for (std::size_t oh = 0; oh < ho; ++oh)
        for (std::size_t ow = 0; ow < wo; ++ow) {
          const float m = a.out.data()[pl * ho * wo + oh * wo + ow];
          const float mb = b.out.data()[pl * ho * wo + oh * wo + ow];
          ASSERT_TRUE(mb == m || (std::isnan(mb) && std::isnan(m))) << s.str() << ": the mask changes no output";
          dead += !(m > 0.0f);
          for (std::size_t i = 0; i < 2; ++i)
            for (std::size_t j = 0; j < 2; ++j) {
              const std::size_t at = pl * H * W + (2 * oh + i) * W + 2 * ow + j;
              EXPECT_EQ(b.din.data()[at], m > 0.0f ? a.din.data()[at] : 0.0f) << s.str() << " at " << at;
            }
        }
    EXPECT_GT(dead, planes * ho * wo / 8) << s.str();  // about 40% of the windows
  }
}

}  // namespace
}  // namespace scalelab::nn
