// The direct products for convolutions with few column rows (nn/narrow_conv.h) against plain
// loops in double, over shapes that reach every path: whole vector blocks, the last pixels of an
// image, a last group of fewer filters, columns that do not fill a vector.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "nn/narrow_conv.h"

namespace scalelab::nn {
namespace {

std::vector<float> pattern(std::size_t n, unsigned seed) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<float>((i * 7919u + seed * 104729u) % 251u) / 125.0f - 1.0f;
  return v;
}

struct Shape4 {
  std::size_t rows, filters, images, plane;
};

class NarrowConv : public ::testing::TestWithParam<Shape4> {};

TEST_P(NarrowConv, ForwardMatchesPlainLoops) {
  const Shape4 s = GetParam();
  if (!narrow_conv_supported(s.rows)) GTEST_SKIP() << "this build's vectors are narrower than 256 bits";
  const std::size_t columns = s.images * s.plane;
  const auto cols = pattern(s.rows * columns, 1), w = pattern(s.filters * s.rows, 2), bias = pattern(s.filters, 3);
  for (const bool relu : {false, true})
    for (const bool with_bias : {false, true}) {
      std::vector<float> out(s.images * s.filters * s.plane, 99.0f);
      narrow_conv_forward(s.rows, s.filters, s.images, s.plane, w.data(), with_bias ? bias.data() : nullptr, cols.data(),
                          relu, out.data());
      double worst = 0;
      for (std::size_t b = 0; b < s.images; ++b)
        for (std::size_t f = 0; f < s.filters; ++f)
          for (std::size_t p = 0; p < s.plane; ++p) {
            double e = with_bias ? bias[f] : 0.0;
            for (std::size_t r = 0; r < s.rows; ++r) e += double(w[f * s.rows + r]) * cols[r * columns + b * s.plane + p];
            if (relu) e = std::max(e, 0.0);
            worst = std::max(worst, std::abs(out[(b * s.filters + f) * s.plane + p] - e));
          }
      EXPECT_LT(worst, 1e-5) << "relu " << relu << ", bias " << with_bias;
    }
}

TEST_P(NarrowConv, WeightGradientAccumulatesThePlainSum) {
  const Shape4 s = GetParam();
  if (!narrow_conv_supported(s.rows)) GTEST_SKIP() << "this build's vectors are narrower than 256 bits";
  const std::size_t columns = s.images * s.plane;
  const auto cols = pattern(s.rows * columns, 4), dz = pattern(s.filters * columns, 5);
  std::vector<float> dwt(s.rows * s.filters, 0.5f);  // accumulates: starts from 0.5
  narrow_conv_weight_gradient(s.rows, s.filters, columns, cols.data(), dz.data(), dwt.data());
  for (std::size_t r = 0; r < s.rows; ++r)
    for (std::size_t f = 0; f < s.filters; ++f) {
      double e = 0.5;
      for (std::size_t q = 0; q < columns; ++q) e += double(cols[r * columns + q]) * dz[f * columns + q];
      EXPECT_NEAR(dwt[r * s.filters + f], e, 1e-5 * (1.0 + double(columns))) << "row " << r << ", filter " << f;
    }
}

INSTANTIATE_TEST_SUITE_P(Shapes, NarrowConv,
                         ::testing::Values(Shape4{9, 32, 3, 676},  // the cnn's first layer, 3 images
                                           Shape4{9, 10, 2, 143},  // 8 + 2 filters; 143 = 8 x 16 + 15 pixels
                                           Shape4{1, 3, 1, 5},     // nothing fills a vector
                                           Shape4{16, 17, 1, 40},  // the most rows; an odd filter count
                                           Shape4{4, 8, 5, 16}));  // whole vectors only

TEST(NarrowConv, TakesOnlyFewRows) {
  EXPECT_FALSE(narrow_conv_supported(0));
  EXPECT_FALSE(narrow_conv_supported(kNarrowConvMaxRows + 1));
  EXPECT_FALSE(narrow_conv_supported(27));  // an RGB 3x3 layer goes to the BLAS
}

}  // namespace
}  // namespace scalelab::nn
