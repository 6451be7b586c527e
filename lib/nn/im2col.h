// im2col / col2im over a whole batch, the layout Conv2D multiplies with one large product:
// cols is (C*Kh*Kw) rows by (N*Ho*Wo) columns, row r = (c, ki, kj), column = (n, oh, ow), and
// cols[r][n, oh, ow] = in[n][c][oh*stride - pad + ki][ow*stride - pad + kj] (0 outside the image).
#pragma once
#include <cstddef>

namespace scalelab::nn {

struct ConvGeometry {
  std::size_t channels, height, width;  // input, per sample
  std::size_t kernel_h, kernel_w, stride, pad;
  [[nodiscard]] std::size_t out_h() const { return (height + 2 * pad - kernel_h) / stride + 1; }
  [[nodiscard]] std::size_t out_w() const { return (width + 2 * pad - kernel_w) / stride + 1; }
  [[nodiscard]] std::size_t rows() const { return channels * kernel_h * kernel_w; }
};

// in: (batch, C, H, W); cols: rows() x (batch * Ho * Wo), fully overwritten.
void im2col(const ConvGeometry& g, std::size_t batch, const float* in, float* cols);
// The adjoint: in (batch, C, H, W) is overwritten with the sum of every column entry that
// im2col would have read from each input position. With relu_out (laid out as `in`: the output
// of the ReLU that produced this input), positions where relu_out is not positive get 0 instead:
// that ReLU's derivative, applied while each row is in registers (Conv2D::set_input_gradient_relu_mask).
void col2im(const ConvGeometry& g, std::size_t batch, const float* cols, float* in, const float* relu_out = nullptr);

}  // namespace scalelab::nn
