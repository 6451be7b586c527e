// im2col / col2im (see im2col.h). The inner loop runs along an output row, which for stride 1 is
// a contiguous copy from the input row (the compiler vectorises it); the padding columns at either
// end are handled outside that loop.
#include "nn/im2col.h"

#include <immintrin.h>

#include <algorithm>

namespace scalelab::nn {
namespace {

// dst[0..n) = src[0..n) (add = false) or dst[0..n) += src[0..n) (add = true), for the short rows
// of a convolution (24 floats for the cnn): with AVX-512 one full and one masked vector per row,
// where the compiler's loop spends more on its prologue and remainder than on the copy.
template <bool add>
inline void row_op(float* dst, const float* src, std::size_t n) {
#if defined(__AVX512F__)
  std::size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m512 v = _mm512_loadu_ps(src + i);
    if constexpr (add) v = _mm512_add_ps(v, _mm512_loadu_ps(dst + i));
    _mm512_storeu_ps(dst + i, v);
  }
  if (i < n) {
    const __mmask16 m = static_cast<__mmask16>((1u << (n - i)) - 1u);
    __m512 v = _mm512_maskz_loadu_ps(m, src + i);
    if constexpr (add) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(m, dst + i));
    _mm512_mask_storeu_ps(dst + i, m, v);
  }
#else
  for (std::size_t i = 0; i < n; ++i) {
    if constexpr (add) dst[i] += src[i];
    else dst[i] = src[i];
  }
#endif
}

// Range of ow for which iw = ow*stride - pad + kj lies inside [0, W).
inline void valid_range(std::size_t kj, const ConvGeometry& g, std::size_t wo, std::size_t& lo, std::size_t& hi) {
  // ow*stride + kj >= pad  and  ow*stride + kj - pad < W
  long s = static_cast<long>(g.stride), k = static_cast<long>(kj), p = static_cast<long>(g.pad);
  long w = static_cast<long>(g.width);
  long first = k >= p ? 0 : (p - k + s - 1) / s;
  long last = (w - 1 + p - k) < 0 ? -1 : (w - 1 + p - k) / s;  // inclusive
  lo = static_cast<std::size_t>(std::max(0L, first));
  hi = static_cast<std::size_t>(std::clamp(last + 1, 0L, static_cast<long>(wo)));
  if (hi < lo) hi = lo;
}

}  // namespace

void im2col(const ConvGeometry& g, std::size_t batch, const float* in, float* cols) {
  const std::size_t ho = g.out_h(), wo = g.out_w(), plane = ho * wo, ncols = batch * plane;
  const std::size_t hw = g.height * g.width;
  for (std::size_t c = 0; c < g.channels; ++c)
    for (std::size_t ki = 0; ki < g.kernel_h; ++ki)
      for (std::size_t kj = 0; kj < g.kernel_w; ++kj) {
        float* row = cols + ((c * g.kernel_h + ki) * g.kernel_w + kj) * ncols;
        std::size_t lo, hi;
        valid_range(kj, g, wo, lo, hi);
        for (std::size_t n = 0; n < batch; ++n) {
          const float* src = in + (n * g.channels + c) * hw;
          for (std::size_t oh = 0; oh < ho; ++oh) {
            float* dst = row + n * plane + oh * wo;
            long ih = static_cast<long>(oh * g.stride + ki) - static_cast<long>(g.pad);
            if (ih < 0 || ih >= static_cast<long>(g.height)) {
              std::fill_n(dst, wo, 0.0f);
              continue;
            }
            // For ow in [lo, hi), ow*stride + kj - pad is inside [0, W) (valid_range).
            const float* srow = src + static_cast<std::size_t>(ih) * g.width;
            std::fill_n(dst, lo, 0.0f);
            if (g.stride == 1) {
              row_op<false>(dst + lo, srow + (lo + kj - g.pad), hi - lo);  // lo + kj >= pad
            } else {
              for (std::size_t ow = lo; ow < hi; ++ow) dst[ow] = srow[ow * g.stride + kj - g.pad];
            }
            std::fill(dst + hi, dst + wo, 0.0f);
          }
        }
      }
}

void col2im(const ConvGeometry& g, std::size_t batch, const float* cols, float* in) {
  const std::size_t ho = g.out_h(), wo = g.out_w(), plane = ho * wo, ncols = batch * plane;
  const std::size_t hw = g.height * g.width;
  std::fill_n(in, batch * g.channels * hw, 0.0f);
  for (std::size_t c = 0; c < g.channels; ++c)
    for (std::size_t ki = 0; ki < g.kernel_h; ++ki)
      for (std::size_t kj = 0; kj < g.kernel_w; ++kj) {
        const float* row = cols + ((c * g.kernel_h + ki) * g.kernel_w + kj) * ncols;
        std::size_t lo, hi;
        valid_range(kj, g, wo, lo, hi);
        for (std::size_t n = 0; n < batch; ++n) {
          float* dst = in + (n * g.channels + c) * hw;
          for (std::size_t oh = 0; oh < ho; ++oh) {
            long ih = static_cast<long>(oh * g.stride + ki) - static_cast<long>(g.pad);
            if (ih < 0 || ih >= static_cast<long>(g.height)) continue;
            const float* src = row + n * plane + oh * wo;
            // For ow in [lo, hi), ow*stride + kj - pad is inside [0, W) (valid_range).
            float* drow = dst + static_cast<std::size_t>(ih) * g.width;
            if (g.stride == 1) {
              row_op<true>(drow + (lo + kj - g.pad), src + lo, hi - lo);
            } else {
              for (std::size_t ow = lo; ow < hi; ++ow) drow[ow * g.stride + kj - g.pad] += src[ow];
            }
          }
        }
      }
}

}  // namespace scalelab::nn
