// im2col / col2im (see im2col.h). The inner loop runs along an output row, which for stride 1 is
// a contiguous copy from the input row; the padding columns at either end are handled outside
// that loop, and at stride 1 whole runs of rows are copied with two moving pointers
// (im2col_stride1). col2im at stride 1 on rows of at most 32 floats (the cnn's)
// sums each input row in registers instead (col2im_narrow, with AVX-512 or AVX2): about 3x faster
// there with AVX-512, in the same order of additions, so the same to the last bit.
#include "nn/im2col.h"

#include <immintrin.h>

#include <algorithm>
#include <array>
#include <cstdint>

namespace scalelab::nn {
namespace {

// dst[0..n) += src[0..n), for the short rows of a convolution: with AVX-512 whole vectors and one
// masked one per row, where the compiler's loop spends more on its prologue and remainder than on
// the additions.
inline void add_row(float* dst, const float* src, std::size_t n) {
#if defined(__AVX512F__)
  std::size_t i = 0;
  for (; i + 16 <= n; i += 16) _mm512_storeu_ps(dst + i, _mm512_add_ps(_mm512_loadu_ps(src + i), _mm512_loadu_ps(dst + i)));
  if (i < n) {
    const __mmask16 m = static_cast<__mmask16>((1u << (n - i)) - 1u);
    _mm512_mask_storeu_ps(dst + i, m, _mm512_add_ps(_mm512_maskz_loadu_ps(m, src + i), _mm512_maskz_loadu_ps(m, dst + i)));
  }
#else
  for (std::size_t i = 0; i < n; ++i) dst[i] += src[i];
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

#if defined(__AVX512F__)
constexpr std::size_t kNarrowMaxKernel = 16;  // kernel widths col2im_narrow takes

// Rows of at most 32 floats as two vectors: a source row shifted right by `shift` places (left
// where negative), lanes that fall outside [0, n) of the source zeroed, as one two-source permute
// per vector. Built once per kernel column, then applied to every row.
struct RowShift {
  __m512i idx0, idx1;
  __mmask16 keep0, keep1;
  RowShift() = default;
  RowShift(long shift, std::size_t n) {
    alignas(64) int i0[16], i1[16];
    unsigned k0 = 0, k1 = 0;
    for (int i = 0; i < 16; ++i) {
      const long s0 = i - shift, s1 = 16 + i - shift;
      i0[i] = static_cast<int>(s0 & 31);
      i1[i] = static_cast<int>(s1 & 31);
      if (s0 >= 0 && s0 < static_cast<long>(n)) k0 |= 1u << i;
      if (s1 >= 0 && s1 < static_cast<long>(n)) k1 |= 1u << i;
    }
    idx0 = _mm512_load_si512(i0);
    idx1 = _mm512_load_si512(i1);
    keep0 = static_cast<__mmask16>(k0);
    keep1 = static_cast<__mmask16>(k1);
  }
};

inline __mmask16 first_lanes(std::size_t n) {  // lanes [0, n) of 16
  return static_cast<__mmask16>(n >= 16 ? 0xFFFFu : (1u << n) - 1u);
}

// col2im for stride 1 and rows of at most 32 (the cnn's 26-wide inputs, 24-wide outputs): each
// input row is summed in two registers from the Kh x Kw column rows that read it, shifted into
// place, and stored once, instead of adding into memory Kh x Kw times after zero-filling it.
void col2im_narrow(const ConvGeometry& g, std::size_t batch, const float* cols, float* in, const float* relu_out) {
  const std::size_t ho = g.out_h(), wo = g.out_w(), plane = ho * wo, ncols = batch * plane;
  const std::size_t w = g.width, kh = g.kernel_h, kw = g.kernel_w;
  std::array<RowShift, kNarrowMaxKernel> shifts;  // on the stack: this runs every step, and allocates nothing
  for (std::size_t kj = 0; kj < kw; ++kj) shifts[kj] = RowShift(static_cast<long>(kj) - static_cast<long>(g.pad), wo);
  const __mmask16 src0 = first_lanes(wo), src1 = first_lanes(wo > 16 ? wo - 16 : 0);
  const __mmask16 dst0 = first_lanes(w), dst1 = first_lanes(w > 16 ? w - 16 : 0);
  for (std::size_t n = 0; n < batch; ++n)
    for (std::size_t c = 0; c < g.channels; ++c) {
      float* dst = in + (n * g.channels + c) * g.height * w;
      const float* mask = relu_out == nullptr ? nullptr : relu_out + (n * g.channels + c) * g.height * w;
      const float* rows = cols + c * kh * kw * ncols + n * plane;
      for (std::size_t ih = 0; ih < g.height; ++ih) {
        __m512 a0 = _mm512_setzero_ps(), a1 = _mm512_setzero_ps();
        for (std::size_t ki = 0; ki < kh; ++ki) {
          const long oh = static_cast<long>(ih + g.pad) - static_cast<long>(ki);
          if (oh < 0 || oh >= static_cast<long>(ho)) continue;
          const float* src = rows + ki * kw * ncols + static_cast<std::size_t>(oh) * wo;
          for (std::size_t kj = 0; kj < kw; ++kj, src += ncols) {
            const __m512 s0 = _mm512_maskz_loadu_ps(src0, src), s1 = _mm512_maskz_loadu_ps(src1, src + 16);
            const RowShift& r = shifts[kj];
            a0 = _mm512_add_ps(a0, _mm512_maskz_permutex2var_ps(r.keep0, s0, r.idx0, s1));
            a1 = _mm512_add_ps(a1, _mm512_maskz_permutex2var_ps(r.keep1, s0, r.idx1, s1));
          }
        }
        if (mask != nullptr) {
          const __m512 zero = _mm512_setzero_ps();
          a0 = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(_mm512_maskz_loadu_ps(dst0, mask + ih * w), zero, _CMP_GT_OQ), a0);
          a1 = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(_mm512_maskz_loadu_ps(dst1, mask + ih * w + 16), zero, _CMP_GT_OQ), a1);
        }
        _mm512_mask_storeu_ps(dst + ih * w, dst0, a0);
        _mm512_mask_storeu_ps(dst + ih * w + 16, dst1, a1);
      }
    }
}

#elif defined(__AVX2__)
constexpr std::size_t kNarrowMaxKernel = 16;  // kernel widths col2im_narrow takes

// Lanes [0, n) of 8 as an AVX mask (all bits set), n may be negative or above 8.
inline __m256i lanes_below(long n) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(std::clamp(n, 0L, 8L))), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

// col2im_narrow with AVX2, rows of at most 32 floats as four vectors: the input columns
// [8v, 8v + 8) of a kernel column kj read output columns 8v + pad - kj + lane, loaded from the
// column row with a masked load that zeroes the lanes outside [0, wo) (a masked load, unlike a
// masked store, costs about what a plain one does). The same additions in the same order as the
// general loop, so the same to the last bit. Rows are stored whole where the last vector's lanes
// past the row land in rows this plane writes later; the plane's last rows through a buffer.
void col2im_narrow(const ConvGeometry& g, std::size_t batch, const float* cols, float* in, const float* relu_out) {
  const std::size_t ho = g.out_h(), wo = g.out_w(), plane = ho * wo, ncols = batch * plane;
  const std::size_t w = g.width, kh = g.kernel_h, kw = g.kernel_w, vectors = (w + 7) / 8;
  struct Shift {
    long from[4];      // where vector v's lanes start in the column row (may be negative)
    __m256i keep[4];   // lanes whose output column lies in [0, wo)
  };
  std::array<Shift, kNarrowMaxKernel> shifts;  // on the stack: this runs every step, and allocates nothing
  for (std::size_t kj = 0; kj < kw; ++kj)
    for (std::size_t v = 0; v < vectors; ++v) {
      const long from = static_cast<long>(8 * v + g.pad) - static_cast<long>(kj);
      shifts[kj].from[v] = from;
      // lane l is kept where 0 <= from + l < wo and 8v + l < w
      const __m256i lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
      const __m256i col = _mm256_add_epi32(lanes, _mm256_set1_epi32(static_cast<int>(from)));
      const __m256i inside = _mm256_and_si256(_mm256_cmpgt_epi32(col, _mm256_set1_epi32(-1)),
                                              _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(wo)), col));
      shifts[kj].keep[v] = _mm256_and_si256(inside, lanes_below(static_cast<long>(w) - static_cast<long>(8 * v)));
    }
  const std::size_t hw = g.height * w;
  for (std::size_t n = 0; n < batch; ++n)
    for (std::size_t c = 0; c < g.channels; ++c) {
      float* dst = in + (n * g.channels + c) * hw;
      const float* mask = relu_out == nullptr ? nullptr : relu_out + (n * g.channels + c) * hw;
      const float* rows = cols + c * kh * kw * ncols + n * plane;
      for (std::size_t ih = 0; ih < g.height; ++ih) {
        __m256 a[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()};
        for (std::size_t ki = 0; ki < kh; ++ki) {
          const long oh = static_cast<long>(ih + g.pad) - static_cast<long>(ki);
          if (oh < 0 || oh >= static_cast<long>(ho)) continue;
          const float* src = rows + ki * kw * ncols + static_cast<std::size_t>(oh) * wo;
          for (std::size_t kj = 0; kj < kw; ++kj, src += ncols) {
            const Shift& sh = shifts[kj];
            for (std::size_t v = 0; v < vectors; ++v) {
              // The address of lane 0 may lie before the row; masked lanes are not read.
              const auto at = reinterpret_cast<const float*>(reinterpret_cast<std::uintptr_t>(src) +
                                                             static_cast<std::uintptr_t>(sh.from[v] * 4));
              a[v] = _mm256_add_ps(a[v], _mm256_maskload_ps(at, sh.keep[v]));
            }
          }
        }
        float* row = dst + ih * w;
        if (mask != nullptr)
          for (std::size_t v = 0; v < vectors; ++v) {
            const __m256 m = _mm256_maskload_ps(mask + ih * w + 8 * v, lanes_below(static_cast<long>(w - 8 * v)));
            a[v] = _mm256_and_ps(a[v], _mm256_cmp_ps(m, _mm256_setzero_ps(), _CMP_GT_OQ));
          }
        if (ih * w + 8 * vectors <= hw) {
          for (std::size_t v = 0; v < vectors; ++v) _mm256_storeu_ps(row + 8 * v, a[v]);
        } else {
          alignas(32) float buf[32];
          for (std::size_t v = 0; v < vectors; ++v) _mm256_store_ps(buf + 8 * v, a[v]);
          std::copy_n(buf, w, row);
        }
      }
    }
}
#endif

// Copies n floats: whole vectors, then the rest in halves, quarters and single floats, all with
// plain stores (on some cores, AMD's among them, a masked store costs several times a plain one).
inline void copy_row(float* dst, const float* src, std::size_t n) {
  std::size_t i = 0;
#if defined(__AVX512F__)
  for (; i + 16 <= n; i += 16) _mm512_storeu_ps(dst + i, _mm512_loadu_ps(src + i));
#endif
#if defined(__AVX__)
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(dst + i, _mm256_loadu_ps(src + i));
#endif
  for (; i < n; ++i) dst[i] = src[i];
}

// im2col at stride 1. Per column row (c, ki, kj) and image, the output rows that read inside the
// image are consecutive input rows, each [lo, hi) of a window copied: the loop over them only
// moves two pointers. Rows that read padding are zero-filled whole. About 1.7x the general loop
// on the cnn's second layer (24-float rows), where the per-row bookkeeping cost more than the copy.
void im2col_stride1(const ConvGeometry& g, std::size_t batch, const float* in, float* cols) {
  const std::size_t ho = g.out_h(), wo = g.out_w(), plane = ho * wo, ncols = batch * plane;
  const std::size_t h = g.height, w = g.width, pad = g.pad;
  for (std::size_t c = 0; c < g.channels; ++c)
    for (std::size_t ki = 0; ki < g.kernel_h; ++ki) {
      // Output rows [first, end) read input rows oh + ki - pad, inside [0, h).
      const std::size_t first = ki >= pad ? 0 : std::min(ho, pad - ki);
      const std::size_t end = std::max(first, std::min(ho, h + pad - ki));
      for (std::size_t kj = 0; kj < g.kernel_w; ++kj) {
        float* row = cols + ((c * g.kernel_h + ki) * g.kernel_w + kj) * ncols;
        std::size_t lo, hi;
        valid_range(kj, g, wo, lo, hi);
        const std::size_t len = hi - lo;
        for (std::size_t n = 0; n < batch; ++n) {
          float* dst = row + n * plane;
          if (first > 0) std::fill(dst, dst + first * wo, 0.0f);
          float* d = dst + first * wo + lo;
          // Input row first + ki - pad, column lo + kj - pad (both inside the image).
          const float* s = in + ((n * g.channels + c) * h + (first + ki - pad)) * w + (lo + kj - pad);
#if defined(__AVX512F__)
          if (len >= 16 && len == wo) {
            // Whole rows of at least one vector: full vectors, then one ending at the row's end
            // (overlapping the one before, with the same values).
            for (std::size_t oh = first; oh < end; ++oh, d += wo, s += w) {
              std::size_t i = 0;
              for (; i + 16 <= len; i += 16) _mm512_storeu_ps(d + i, _mm512_loadu_ps(s + i));
              if (i < len) _mm512_storeu_ps(d + len - 16, _mm512_loadu_ps(s + len - 16));
            }
          } else
#elif defined(__AVX__)
          if (len >= 8 && len == wo) {  // the same with 8-float vectors
            for (std::size_t oh = first; oh < end; ++oh, d += wo, s += w) {
              std::size_t i = 0;
              for (; i + 8 <= len; i += 8) _mm256_storeu_ps(d + i, _mm256_loadu_ps(s + i));
              if (i < len) _mm256_storeu_ps(d + len - 8, _mm256_loadu_ps(s + len - 8));
            }
          } else
#endif
          {
            for (std::size_t oh = first; oh < end; ++oh, d += wo, s += w) {
              std::fill(d - lo, d, 0.0f);
              copy_row(d, s, len);
              std::fill(d + len, d + (wo - lo), 0.0f);
            }
          }
          if (end < ho) std::fill(dst + end * wo, dst + plane, 0.0f);
        }
      }
    }
}

}  // namespace

void im2col(const ConvGeometry& g, std::size_t batch, const float* in, float* cols) {
  if (g.stride == 1) {
    im2col_stride1(g, batch, in, cols);
    return;
  }
  // Strided: the general loop.
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
            for (std::size_t ow = lo; ow < hi; ++ow) dst[ow] = srow[ow * g.stride + kj - g.pad];
            std::fill(dst + hi, dst + wo, 0.0f);
          }
        }
      }
}

void col2im(const ConvGeometry& g, std::size_t batch, const float* cols, float* in, const float* relu_out) {
#if defined(__AVX512F__) || defined(__AVX2__)
  if (g.stride == 1 && g.width <= 32 && g.out_w() <= 32 && g.kernel_w <= kNarrowMaxKernel) {
    col2im_narrow(g, batch, cols, in, relu_out);
    return;
  }
#endif
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
              add_row(drow + (lo + kj - g.pad), src + lo, hi - lo);
            } else {
              for (std::size_t ow = lo; ow < hi; ++ow) drow[ow * g.stride + kj - g.pad] += src[ow];
            }
          }
        }
      }
  if (relu_out != nullptr)
    for (std::size_t i = 0; i < batch * g.channels * hw; ++i) in[i] = relu_out[i] > 0.0f ? in[i] : 0.0f;
}

}  // namespace scalelab::nn
