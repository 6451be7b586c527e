// MaxPooling2D forward and backward (see maxpool2d.h).
#include "nn/maxpool2d.h"

#include <algorithm>

namespace scalelab::nn {

MaxPool2D::MaxPool2D(std::size_t pool, std::size_t stride) : pool_(pool), stride_(stride ? stride : pool) {
  if (pool == 0) throw_usage("MaxPooling2D: the pool size must be at least 1");
}

Shape MaxPool2D::output_shape(const Shape& in) const {
  if (in.rank() != 3 || in[1] < pool_ || in[2] < pool_)
    throw_usage("MaxPooling2D(" + std::to_string(pool_) + ") needs (channels, height, width) inputs of at least the pool size, got " + in.str());
  return {in[0], (in[1] - pool_) / stride_ + 1, (in[2] - pool_) / stride_ + 1};
}

void MaxPool2D::reserve(const Shape& in_shape, std::size_t max_batch) {
  // Filled here so that every page is touched once, outside the step.
  argmax_.assign(max_batch * output_shape(in_shape).numel(), 0u);
}

void MaxPool2D::forward(ConstTensorView in, TensorView out, bool /*training*/) {
  const std::size_t planes = in.shape[0] * in.shape[1], h = in.shape[2], w = in.shape[3];
  const std::size_t ho = out.shape[2], wo = out.shape[3];
  for (std::size_t pl = 0; pl < planes; ++pl) {
    const float* src = in.data + pl * h * w;
    float* dst = out.data + pl * ho * wo;
    std::uint32_t* arg = argmax_.data() + pl * ho * wo;
    for (std::size_t oh = 0; oh < ho; ++oh)
      for (std::size_t ow = 0; ow < wo; ++ow) {
        std::size_t best = oh * stride_ * w + ow * stride_;
        float m = src[best];
        for (std::size_t i = 0; i < pool_; ++i)
          for (std::size_t j = 0; j < pool_; ++j) {
            std::size_t at = (oh * stride_ + i) * w + ow * stride_ + j;
            if (src[at] > m) {
              m = src[at];
              best = at;
            }
          }
        dst[oh * wo + ow] = m;
        arg[oh * wo + ow] = static_cast<std::uint32_t>(best);
      }
  }
}

void MaxPool2D::backward(ConstTensorView in, ConstTensorView out, ConstTensorView dout, TensorView din) {
  if (din.empty()) return;
  const std::size_t planes = in.shape[0] * in.shape[1], hw = in.shape[2] * in.shape[3];
  const std::size_t ohw = out.shape[2] * out.shape[3];
  std::fill_n(din.data, in.numel(), 0.0f);
  for (std::size_t pl = 0; pl < planes; ++pl) {
    float* d = din.data + pl * hw;
    const float* g = dout.data + pl * ohw;
    const std::uint32_t* arg = argmax_.data() + pl * ohw;
    for (std::size_t o = 0; o < ohw; ++o) d[arg[o]] += g[o];
  }
}

}  // namespace scalelab::nn
