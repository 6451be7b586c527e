// Conv2D: forward against a direct (seven nested loops) convolution, and backward against finite
// differences, for stride and padding variants and with the fused ReLU.
#include <gtest/gtest.h>

#include "grad_check.h"
#include "nn/conv2d.h"

namespace scalelab::nn {
namespace {

struct Case {
  std::size_t cin, h, w, filters, k, stride, pad;
  Activation act;
};

class Conv2DCase : public ::testing::TestWithParam<Case> {};

Conv2DOptions options(const Case& c) {
  Conv2DOptions o;
  o.filters = c.filters;
  o.kernel = c.k;
  o.stride = c.stride;
  o.pad = c.pad;
  o.activation = c.act;
  return o;
}

TEST_P(Conv2DCase, ForwardMatchesDirectConvolution) {
  const Case c = GetParam();
  Conv2D conv(options(c));
  testing::LayerHarness h(conv, Shape{c.cin, c.h, c.w}, 2);
  h.loss();
  const Shape os = conv.output_shape(h.in_shape);
  const float* wt = h.params.value(0);
  const float* bias = h.params.value(1);
  double worst = 0;
  for (std::size_t n = 0; n < 2; ++n)
    for (std::size_t f = 0; f < c.filters; ++f)
      for (std::size_t oh = 0; oh < os[1]; ++oh)
        for (std::size_t ow = 0; ow < os[2]; ++ow) {
          double s = bias[f];
          for (std::size_t ci = 0; ci < c.cin; ++ci)
            for (std::size_t ki = 0; ki < c.k; ++ki)
              for (std::size_t kj = 0; kj < c.k; ++kj) {
                long ih = long(oh * c.stride + ki) - long(c.pad), iw = long(ow * c.stride + kj) - long(c.pad);
                if (ih < 0 || iw < 0 || ih >= long(c.h) || iw >= long(c.w)) continue;
                s += double(wt[((f * c.cin + ci) * c.k + ki) * c.k + kj]) *
                     h.in.data()[((n * c.cin + ci) * c.h + std::size_t(ih)) * c.w + std::size_t(iw)];
              }
          if (c.act == Activation::relu) s = std::max(s, 0.0);
          double got = h.out.data()[((n * c.filters + f) * os[1] + oh) * os[2] + ow];
          worst = std::max(worst, std::abs(got - s) / (1.0 + std::abs(s)));
        }
  EXPECT_LT(worst, 1e-5);
}

TEST_P(Conv2DCase, InputAndParameterGradientsMatchFiniteDifferences) {
  Conv2D conv(options(GetParam()));
  testing::SkipKinks kinks;  // only matters for the fused ReLU cases
  testing::LayerHarness h(conv, Shape{GetParam().cin, GetParam().h, GetParam().w}, 3);
  // A bias moves every output of its filter: a smaller step keeps ReLU kinks out of reach.
  const float eps = GetParam().act == Activation::relu ? 1e-3f : 1e-2f;
  EXPECT_LT(h.input_error(), 2e-3);
  EXPECT_LT(h.param_error(0, eps), 2e-3);  // weight
  EXPECT_LT(h.param_error(1, eps), 2e-3);  // bias
}

INSTANTIATE_TEST_SUITE_P(Variants, Conv2DCase,
                         ::testing::Values(Case{1, 6, 6, 4, 3, 1, 0, Activation::none},
                                           Case{3, 7, 5, 4, 3, 1, 1, Activation::none},
                                           Case{2, 7, 7, 3, 3, 2, 1, Activation::none},
                                           Case{2, 8, 8, 3, 3, 2, 0, Activation::none},
                                           Case{3, 5, 5, 2, 1, 2, 0, Activation::none},
                                           Case{2, 6, 6, 5, 3, 1, 0, Activation::relu},
                                           Case{1, 9, 9, 2, 5, 3, 2, Activation::relu},
                                           // one channel, 3x3: nn/narrow_conv.h's products (9 rows)
                                           // with a group of 8 filters and 2 more, and an image's last pixels
                                           Case{1, 10, 9, 10, 3, 1, 1, Activation::none}));

TEST(Conv2D, BackwardAccumulatesIntoParameterGradients) {
  Conv2DOptions o;
  o.filters = 2;
  Conv2D conv(o);
  testing::LayerHarness h(conv, Shape{1, 5, 5}, 2);
  h.backward();
  std::vector<float> once(h.params.grads().begin(), h.params.grads().end());
  h.loss();
  conv.backward(h.in.view(), h.out.view(), h.r.view(), h.din.view());  // no zero_grad in between
  for (std::size_t i = 0; i < once.size(); ++i) EXPECT_NEAR(h.params.grads()[i], 2 * once[i], 1e-4f * (1 + std::abs(once[i])));
}

// Large images go through in chunks of a few (about 2 MiB of columns each): a batch spanning
// several chunks must give what each image gives alone (the single-image path is the one the
// finite-difference tests check).
TEST(Conv2D, ChunkedBatchEqualsImageByImage) {
  Conv2DOptions o;
  o.filters = 8;
  o.pad = 1;
  o.activation = Activation::relu;
  Conv2D conv(o);
  const Shape s{16, 30, 30};  // 144 x 900 columns per image: 518 KB, so 4 images per chunk
  const std::size_t n = 7;
  testing::LayerHarness h(conv, s, n);
  h.backward();
  std::vector<float> dw_all(h.params.grads().begin(), h.params.grads().end());
  std::vector<float> out_all(h.out.data(), h.out.data() + h.out.numel());
  std::vector<float> din_all(h.din.data(), h.din.data() + h.din.numel());
  std::vector<float> dw_sum(dw_all.size(), 0.0f);
  const std::size_t in_img = s.numel(), out_img = h.out.numel() / n;
  for (std::size_t b = 0; b < n; ++b) {
    h.params.zero_grad();
    ConstTensorView x = h.in.view().slice(b, 1);
    TensorView y = h.out.view().slice(b, 1), dx = h.din.view().slice(b, 1);
    conv.forward(x, y, true);
    for (std::size_t i = 0; i < out_img; ++i) EXPECT_NEAR(y.data[i], out_all[b * out_img + i], 1e-4f);
    conv.backward(x, y, h.r.view().slice(b, 1), dx);
    for (std::size_t i = 0; i < in_img; i += 13) EXPECT_NEAR(dx.data[i], din_all[b * in_img + i], 1e-4f);
    for (std::size_t i = 0; i < dw_sum.size(); ++i) dw_sum[i] += h.params.grads()[i];
  }
  for (std::size_t i = 0; i < dw_sum.size(); ++i) EXPECT_NEAR(dw_sum[i], dw_all[i], 1e-3f * (1 + std::abs(dw_all[i])));
}

TEST(Conv2D, KernelLargerThanThePaddedInputIsAUsageError) {
  Conv2DOptions o;
  o.filters = 2;
  o.kernel = 5;
  Conv2D conv(o);
  EXPECT_THROW((void)conv.output_shape(Shape{1, 3, 3}), Error);
}

}  // namespace
}  // namespace scalelab::nn
