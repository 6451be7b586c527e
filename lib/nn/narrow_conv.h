// A convolution's two products when its columns have only a few rows (K = C*k*k <= 16: a first
// layer on one-channel images, the cnn's 1 -> 32 3x3 convolution, K = 9), computed directly with
// vector registers instead of through the BLAS, which packs its operands for long inner
// dimensions. On ten images of the cnn's first layer (6,760 columns; AMD EPYC Zen 5, one thread)
// OpenBLAS's product and the bias/ReLU pass after it took 57 us, these loops 31 us; the weight
// gradient 87 us against 27 (built for AVX2 only: 58 against 44, 89 against 45). With 128-bit
// vectors they lose to the BLAS and are not used. docs/performance.md has the step's figures.
//
//   if (narrow_conv_supported(K)) narrow_conv_forward(K, F, n, P, W, bias, cols, relu, out);
//
// Layouts are Conv2D's (nn/conv2d.h, nn/im2col.h): cols is K x (n*P) for n images of P output
// pixels each, W is F x K (row-major), out is (n, F, P).
#pragma once
#include <cstddef>

namespace scalelab::nn {

// The largest K the loops take.
inline constexpr std::size_t kNarrowConvMaxRows = 16;

// True when the loops apply: K <= kNarrowConvMaxRows, and the build has 256-bit or wider vectors
// (with 128-bit ones the BLAS is faster).
[[nodiscard]] bool narrow_conv_supported(std::size_t rows);

// out[b][f][p] = act(bias[f] + sum_r W[f][r] cols[r][b*P + p]) for b < n; bias may be null; act is
// ReLU when relu, else the identity. Overwrites out.
void narrow_conv_forward(std::size_t rows, std::size_t filters, std::size_t images, std::size_t plane,
                         const float* weights, const float* bias, const float* cols, bool relu, float* out);

// dwt[r][f] += sum_q cols[r][q] dz[f][q] over q < columns: the weight gradient transposed
// (rows x filters), as Conv2D accumulates it. cols is rows x columns, dz filters x columns.
void narrow_conv_weight_gradient(std::size_t rows, std::size_t filters, std::size_t columns, const float* cols,
                                 const float* dz, float* dwt);

}  // namespace scalelab::nn
