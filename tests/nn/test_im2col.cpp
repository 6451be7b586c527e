// im2col and col2im against their definitions (im2col.h), entry by entry, over geometries that
// take each path: at stride 1 whole rows of 16 floats or more, rows with padding and short rows
// (im2col), rows of at most 32 floats (col2im's vector path, kernels from 1 to 5) and wider ones;
// stride 2 (the general loops). col2im must equal the sum, in the same order, of every column
// entry that reads each input position: the same to the last bit, and with a ReLU's output
// given, 0 where that output is not positive.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "nn/im2col.h"

namespace scalelab::nn {
namespace {

struct Case {
  ConvGeometry g;
  std::size_t batch;
};

std::vector<float> random_values(std::size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(gen);
  return v;
}

// The input position column (n, oh, ow) of row (c, ki, kj) reads, or -1 for padding.
long source(const ConvGeometry& g, std::size_t n, std::size_t c, std::size_t ki, std::size_t kj, std::size_t oh,
            std::size_t ow) {
  const long ih = static_cast<long>(oh * g.stride + ki) - static_cast<long>(g.pad);
  const long iw = static_cast<long>(ow * g.stride + kj) - static_cast<long>(g.pad);
  if (ih < 0 || iw < 0 || ih >= static_cast<long>(g.height) || iw >= static_cast<long>(g.width)) return -1;
  return static_cast<long>(((n * g.channels + c) * g.height + static_cast<std::size_t>(ih)) * g.width +
                           static_cast<std::size_t>(iw));
}

class Im2col : public ::testing::TestWithParam<Case> {};

TEST_P(Im2col, ColumnsAndTheirAdjointFollowTheDefinition) {
  const auto [g, batch] = GetParam();
  const std::size_t ho = g.out_h(), wo = g.out_w(), ncols = batch * ho * wo;
  const std::size_t in_size = batch * g.channels * g.height * g.width, cols_size = g.rows() * ncols;
  const std::vector<float> x = random_values(in_size, 1), y = random_values(cols_size, 2);
  std::vector<float> cols(cols_size, -7.0f), back(in_size, -7.0f);  // both must be fully overwritten
  im2col(g, batch, x.data(), cols.data());
  col2im(g, batch, y.data(), back.data());
  std::vector<float> expect_back(in_size, 0.0f);
  for (std::size_t c = 0; c < g.channels; ++c)
    for (std::size_t ki = 0; ki < g.kernel_h; ++ki)
      for (std::size_t kj = 0; kj < g.kernel_w; ++kj)
        for (std::size_t n = 0; n < batch; ++n)
          for (std::size_t oh = 0; oh < ho; ++oh)
            for (std::size_t ow = 0; ow < wo; ++ow) {
              const std::size_t at = ((c * g.kernel_h + ki) * g.kernel_w + kj) * ncols + (n * ho + oh) * wo + ow;
              const long src = source(g, n, c, ki, kj, oh, ow);
              ASSERT_EQ(cols[at], src < 0 ? 0.0f : x[static_cast<std::size_t>(src)]) << "column entry " << at;
              if (src >= 0) expect_back[static_cast<std::size_t>(src)] += y[at];
            }
  for (std::size_t i = 0; i < in_size; ++i) ASSERT_EQ(back[i], expect_back[i]) << "input position " << i;
  // With a ReLU's output beside it (about half of it not positive, zeros among them): that ReLU's
  // derivative applied, the rest the same to the last bit.
  std::vector<float> relu_out = random_values(in_size, 3), masked(in_size, -7.0f);
  for (std::size_t i = 0; i < in_size; i += 5) relu_out[i] = 0.0f;
  col2im(g, batch, y.data(), masked.data(), relu_out.data());
  std::size_t zeroed = 0;
  for (std::size_t i = 0; i < in_size; ++i) {
    const bool pass = relu_out[i] > 0.0f;
    zeroed += !pass;
    ASSERT_EQ(masked[i], pass ? expect_back[i] : 0.0f) << "input position " << i << " under the ReLU mask";
  }
  EXPECT_GT(zeroed, in_size / 4);
}

INSTANTIATE_TEST_SUITE_P(
    Geometries, Im2col,
    ::testing::Values(Case{{32, 26, 26, 3, 3, 1, 0}, 2},   // the cnn's second convolution
                      Case{{1, 28, 28, 3, 3, 1, 0}, 3},    // its first
                      Case{{3, 9, 7, 3, 3, 1, 1}, 2},      // 'same' padding, short rows
                      Case{{2, 12, 32, 5, 5, 1, 2}, 1},    // 32-wide rows, kernel 5
                      Case{{2, 6, 17, 1, 1, 1, 0}, 2},     // 1 x 1, 17 wide
                      Case{{2, 8, 10, 3, 3, 1, 0}, 3},     // rows shorter than a vector, no padding
                      Case{{2, 6, 30, 2, 4, 1, 3}, 1},     // rectangular kernel, padding above the kernel's half
                      Case{{2, 10, 40, 3, 3, 1, 1}, 2},    // rows wider than 32: the general path
                      Case{{3, 11, 11, 3, 3, 2, 1}, 2}));  // stride 2: the general path

}  // namespace
}  // namespace scalelab::nn
