// GlobalAveragePooling2D forward and backward (see global_avg_pool.h).
#include "nn/global_avg_pool.h"

#include "nn/reduce.h"

namespace scalelab::nn {

Shape GlobalAvgPool::output_shape(const Shape& in) const {
  if (in.rank() != 3) throw_usage("GlobalAveragePooling2D needs (C, H, W) inputs, got " + in.str());
  return {in[0]};
}

void GlobalAvgPool::forward(ConstTensorView in, TensorView out, bool /*training*/) {
  const std::size_t planes = in.shape[0] * in.shape[1], hw = in.shape[2] * in.shape[3];
  for (std::size_t p = 0; p < planes; ++p) {
    out.data[p] = sum(in.data + p * hw, hw) / static_cast<float>(hw);
  }
}

void GlobalAvgPool::backward(ConstTensorView in, ConstTensorView /*out*/, ConstTensorView dout, TensorView din) {
  if (din.empty()) return;
  const std::size_t planes = in.shape[0] * in.shape[1], hw = in.shape[2] * in.shape[3];
  for (std::size_t p = 0; p < planes; ++p) {
    const float g = dout.data[p] / static_cast<float>(hw);
    for (std::size_t i = 0; i < hw; ++i) din.data[p * hw + i] = g;
  }
}

}  // namespace scalelab::nn
