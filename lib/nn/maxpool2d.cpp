// MaxPooling2D forward and backward (see maxpool2d.h).
#include "nn/maxpool2d.h"

#include <immintrin.h>

#include <algorithm>

namespace scalelab::nn {

MaxPool2D::MaxPool2D(std::size_t pool, std::size_t stride) : pool_(pool), stride_(stride ? stride : pool) {
  if (pool == 0) throw_usage("MaxPooling2D: the pool size must be at least 1");
  if (pool > kMaxPool)
    throw_usage("MaxPooling2D: the pool size must be at most " + std::to_string(kMaxPool) + ", got " +
                std::to_string(pool));
}

Shape MaxPool2D::output_shape(const Shape& in) const {
  if (in.rank() != 3 || in[1] < pool_ || in[2] < pool_)
    throw_usage("MaxPooling2D(" + std::to_string(pool_) + ") needs (channels, height, width) inputs of at least the pool size, got " + in.str());
  return {in[0], (in[1] - pool_) / stride_ + 1, (in[2] - pool_) / stride_ + 1};
}

void MaxPool2D::reserve(const Shape& in_shape, std::size_t max_batch) {
  // Filled here so that every page is touched once, outside the step.
  // One vector's worth past the end: the backward pass loads 16 places at a time.
  where_.assign(max_batch * output_shape(in_shape).numel() + 16, 0u);
}

namespace {

// The maximum's place in its window, or kNoGradient where the fused ReLU's derivative is 0 there.
std::uint16_t place(std::size_t best, float max, bool relu_mask) {
  return relu_mask && !(max > 0.0f) ? MaxPool2D::kNoGradient : static_cast<std::uint16_t>(best);
}

// The common 2x2, stride 2 case. With AVX-512, 16 outputs at a time: two loads per input row,
// split into even and odd columns, then three compare-and-blend steps on values and places
// (strict >, so ties keep the first maximum); with AVX2 the same on 8. The scalar loop is the
// reference and the tail.
void pool2x2_scalar(const float* r0, const float* r1, std::size_t from, std::size_t to, float* dst,
                    std::uint16_t* where, bool relu_mask) {
  for (std::size_t ow = from; ow < to; ++ow) {
    const std::size_t c = 2 * ow;
    const float v[4] = {r0[c], r0[c + 1], r1[c], r1[c + 1]};
    std::size_t best = 0;
    for (std::size_t i = 1; i < 4; ++i)
      if (v[i] > v[best]) best = i;
    dst[ow] = v[best];
    where[ow] = place(best, v[best], relu_mask);
  }
}

void pool2x2(const float* src, std::size_t w, std::size_t ho, std::size_t wo, float* dst, std::uint16_t* where,
             bool relu_mask) {
  for (std::size_t oh = 0; oh < ho; ++oh) {
    const float* r0 = src + 2 * oh * w;
    const float* r1 = r0 + w;
    float* d = dst + oh * wo;
    std::uint16_t* a = where + oh * wo;
    std::size_t ow = 0;
#if defined(__AVX512F__)
    const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    const __m512i odd = _mm512_add_epi32(even, _mm512_set1_epi32(1));
    for (; ow < wo; ow += 16) {
      const std::size_t n = std::min<std::size_t>(16, wo - ow);
      // 2n inputs per row; the 2-column window never reads past the row (2*wo <= w).
      const __mmask16 lo = static_cast<__mmask16>(n >= 8 ? 0xFFFFu : (1u << (2 * n)) - 1u);
      const __mmask16 hi = static_cast<__mmask16>(n > 8 ? (1u << (2 * n - 16)) - 1u : 0u);
      const std::size_t c = 2 * ow;
      const __m512 a0 = _mm512_maskz_loadu_ps(lo, r0 + c), b0 = _mm512_maskz_loadu_ps(hi, r0 + c + 16);
      const __m512 a1 = _mm512_maskz_loadu_ps(lo, r1 + c), b1 = _mm512_maskz_loadu_ps(hi, r1 + c + 16);
      __m512 m = _mm512_permutex2var_ps(a0, even, b0);
      __m512i at = _mm512_setzero_si512();
      const __m512 v1 = _mm512_permutex2var_ps(a0, odd, b0);
      const __m512 v2 = _mm512_permutex2var_ps(a1, even, b1);
      const __m512 v3 = _mm512_permutex2var_ps(a1, odd, b1);
      __mmask16 k = _mm512_cmp_ps_mask(v1, m, _CMP_GT_OQ);
      m = _mm512_mask_blend_ps(k, m, v1);
      at = _mm512_mask_blend_epi32(k, at, _mm512_set1_epi32(1));
      k = _mm512_cmp_ps_mask(v2, m, _CMP_GT_OQ);
      m = _mm512_mask_blend_ps(k, m, v2);
      at = _mm512_mask_blend_epi32(k, at, _mm512_set1_epi32(2));
      k = _mm512_cmp_ps_mask(v3, m, _CMP_GT_OQ);
      m = _mm512_mask_blend_ps(k, m, v3);
      at = _mm512_mask_blend_epi32(k, at, _mm512_set1_epi32(3));
      if (relu_mask) {
        const __mmask16 dead = _mm512_cmp_ps_mask(m, _mm512_setzero_ps(), _CMP_NGT_UQ);  // !(m > 0)
        at = _mm512_mask_blend_epi32(dead, at, _mm512_set1_epi32(MaxPool2D::kNoGradient));
      }
      const __mmask16 out = static_cast<__mmask16>((1u << n) - 1u);
      _mm512_mask_storeu_ps(d + ow, out, m);
      _mm512_mask_cvtepi32_storeu_epi16(a + ow, out, at);
    }
#elif defined(__AVX2__)
    // 8 outputs at a time, the same steps on 8 lanes. AVX2 has no cheap masked store, so a last
    // block of fewer than 8 windows is run whole where it stays inside the plane: it reads up to 16
    // floats past its row pair's start (into the next rows) and writes up to 8 outputs past the
    // row, into rows of this plane that later rows write again. Elsewhere the scalar loop ends the row.
    const __m256i one = _mm256_set1_epi32(1), two = _mm256_set1_epi32(2), three = _mm256_set1_epi32(3);
    for (; ow < wo; ow += 8) {
      const std::size_t c = 2 * ow;
      const bool whole = ow + 8 <= wo;
      if (!whole && ((2 * oh + 1) * w + c + 16 > 2 * ho * w || oh * wo + ow + 8 > ho * wo)) break;
      const __m256 a0 = _mm256_loadu_ps(r0 + c), b0 = _mm256_loadu_ps(r0 + c + 8);
      const __m256 a1 = _mm256_loadu_ps(r1 + c), b1 = _mm256_loadu_ps(r1 + c + 8);
      // Even and odd columns of 16 inputs: within each 128-bit lane, then the 64-bit halves in order.
      auto even = [](__m256 x, __m256 y) {
        return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(_mm256_shuffle_ps(x, y, _MM_SHUFFLE(2, 0, 2, 0))),
                                                      _MM_SHUFFLE(3, 1, 2, 0)));
      };
      auto odd = [](__m256 x, __m256 y) {
        return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(_mm256_shuffle_ps(x, y, _MM_SHUFFLE(3, 1, 3, 1))),
                                                      _MM_SHUFFLE(3, 1, 2, 0)));
      };
      __m256 m = even(a0, b0);
      __m256i at = _mm256_setzero_si256();
      const __m256 v1 = odd(a0, b0), v2 = even(a1, b1), v3 = odd(a1, b1);
      __m256 k = _mm256_cmp_ps(v1, m, _CMP_GT_OQ);
      m = _mm256_blendv_ps(m, v1, k);
      at = _mm256_blendv_epi8(at, one, _mm256_castps_si256(k));
      k = _mm256_cmp_ps(v2, m, _CMP_GT_OQ);
      m = _mm256_blendv_ps(m, v2, k);
      at = _mm256_blendv_epi8(at, two, _mm256_castps_si256(k));
      k = _mm256_cmp_ps(v3, m, _CMP_GT_OQ);
      m = _mm256_blendv_ps(m, v3, k);
      at = _mm256_blendv_epi8(at, three, _mm256_castps_si256(k));
      if (relu_mask) {
        const __m256 dead = _mm256_cmp_ps(m, _mm256_setzero_ps(), _CMP_NGT_UQ);  // !(m > 0)
        at = _mm256_blendv_epi8(at, _mm256_set1_epi32(MaxPool2D::kNoGradient), _mm256_castps_si256(dead));
      }
      _mm256_storeu_ps(d + ow, m);
      const __m128i places = _mm_packus_epi32(_mm256_castsi256_si128(at), _mm256_extracti128_si256(at, 1));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(a + ow), places);
      if (!whole) {
        ow = wo;
        break;
      }
    }
#endif
    pool2x2_scalar(r0, r1, ow, wo, d, a, relu_mask);
  }
}

}  // namespace

void MaxPool2D::forward(ConstTensorView in, TensorView out, bool /*training*/) {
  // A layer used on its own, without reserve() for this batch: the places grow here (a Model
  // reserves them, and its fused convolution calls forward_images from several threads).
  const std::size_t need = in.shape[0] * out.shape[1] * out.shape[2] * out.shape[3] + 16;
  if (where_.size() < need) where_.resize(need, 0u);
  forward_images(in.data, in.shape[2], in.shape[3], out, 0, in.shape[0]);
}

void MaxPool2D::forward_images(const float* images, std::size_t h, std::size_t w, TensorView out, std::size_t b0,
                               std::size_t n) {
  const std::size_t channels = out.shape[1], ho = out.shape[2], wo = out.shape[3];
  const std::size_t first = b0 * channels, last = (b0 + n) * channels;  // planes
  if (pool_ == 2 && stride_ == 2) {
    for (std::size_t pl = first; pl < last; ++pl)
      pool2x2(images + (pl - first) * h * w, w, ho, wo, out.data + pl * ho * wo, where_.data() + pl * ho * wo,
              relu_mask_);
    return;
  }
  for (std::size_t pl = first; pl < last; ++pl) {
    const float* src = images + (pl - first) * h * w;
    float* dst = out.data + pl * ho * wo;
    std::uint16_t* where = where_.data() + pl * ho * wo;
    for (std::size_t oh = 0; oh < ho; ++oh)
      for (std::size_t ow = 0; ow < wo; ++ow) {
        const float* window = src + oh * stride_ * w + ow * stride_;
        std::size_t best = 0;
        float m = window[0];
        for (std::size_t i = 0; i < pool_; ++i)
          for (std::size_t j = 0; j < pool_; ++j)
            if (window[i * w + j] > m) {
              m = window[i * w + j];
              best = i * pool_ + j;
            }
        dst[oh * wo + ow] = m;
        where[oh * wo + ow] = place(best, m, relu_mask_);
      }
  }
}

void MaxPool2D::backward_plane(std::size_t h, std::size_t w, ConstTensorView out, ConstTensorView dout,
                               std::size_t plane, float* din_plane) const {
  const std::size_t ho = out.shape[2], wo = out.shape[3], ohw = ho * wo;
  const float* g = dout.data + plane * ohw;
  const std::uint16_t* where = where_.data() + plane * ohw;  // kNoGradient where the fused ReLU's derivative is 0
  float* d = din_plane;
  if (pool_ == 2 && stride_ == 2 && h % 2 == 0 && w % 2 == 0) {
    // Windows tile the plane exactly: write every input position once (the gradient at the
    // window's maximum, 0 elsewhere) instead of zero-filling and then scattering.
    for (std::size_t oh = 0; oh < ho; ++oh) {
      float* r0 = d + 2 * oh * w;
      float* r1 = r0 + w;
      std::size_t ow = 0;
#if defined(__AVX512F__)
      // 16 windows at a time: each of the four positions gets the gradient where it holds the
      // window's maximum, 0 elsewhere; even and odd columns are interleaved back into rows.
      const __m512i lo_idx = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
      const __m512i hi_idx = _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
      // Rows of at most 16 windows (one block per row pair) are written with plain stores, 32
      // floats from each row's start, where what lands past the row is written over by the row
      // (or row pair) after it, as long as it stays inside the plane; masked stores cost several
      // times a plain one on some cores (AMD's among them).
      const bool plain = wo <= 16 && (2 * oh + 1) * w + 32 <= h * w;
      for (; ow < wo; ow += 16) {
        const std::size_t n = std::min<std::size_t>(16, wo - ow);
        const __mmask16 in_mask = static_cast<__mmask16>((1u << n) - 1u);
        const __mmask16 lo = static_cast<__mmask16>(n >= 8 ? 0xFFFFu : (1u << (2 * n)) - 1u);
        const __mmask16 hi = static_cast<__mmask16>(n > 8 ? (1u << (2 * n - 16)) - 1u : 0u);
        const __m512 v = _mm512_maskz_loadu_ps(in_mask, g + oh * wo + ow);
        // 16 places (reserve() leaves room past the last one); lanes past n match no place.
        const __m512i a =
            _mm512_maskz_cvtepu16_epi32(in_mask, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(where + oh * wo + ow)));
        const __m512 e0 = _mm512_maskz_mov_ps(_mm512_cmpeq_epi32_mask(a, _mm512_setzero_si512()), v);
        const __m512 o0 = _mm512_maskz_mov_ps(_mm512_cmpeq_epi32_mask(a, _mm512_set1_epi32(1)), v);
        const __m512 e1 = _mm512_maskz_mov_ps(_mm512_cmpeq_epi32_mask(a, _mm512_set1_epi32(2)), v);
        const __m512 o1 = _mm512_maskz_mov_ps(_mm512_cmpeq_epi32_mask(a, _mm512_set1_epi32(3)), v);
        float* d0 = r0 + 2 * ow;
        float* d1 = r1 + 2 * ow;
        if (plain) {
          _mm512_storeu_ps(d0, _mm512_permutex2var_ps(e0, lo_idx, o0));
          _mm512_storeu_ps(d0 + 16, _mm512_permutex2var_ps(e0, hi_idx, o0));
          _mm512_storeu_ps(d1, _mm512_permutex2var_ps(e1, lo_idx, o1));
          _mm512_storeu_ps(d1 + 16, _mm512_permutex2var_ps(e1, hi_idx, o1));
          continue;
        }
        _mm512_mask_storeu_ps(d0, lo, _mm512_permutex2var_ps(e0, lo_idx, o0));
        _mm512_mask_storeu_ps(d0 + 16, hi, _mm512_permutex2var_ps(e0, hi_idx, o0));
        _mm512_mask_storeu_ps(d1, lo, _mm512_permutex2var_ps(e1, lo_idx, o1));
        _mm512_mask_storeu_ps(d1 + 16, hi, _mm512_permutex2var_ps(e1, hi_idx, o1));
      }
#elif defined(__AVX2__)
      // 8 windows at a time, as above on 8 lanes, with plain stores only. A last block of fewer
      // than 8 windows goes first, whole, where its 16 floats from each row's place stay inside
      // the plane: its lanes past the row match no place and write zeros into the next row (and
      // past it), which the full blocks after it and the row pairs below write again. Elsewhere
      // the scalar loop ends the row.
      const std::size_t full = wo / 8 * 8, rest = wo - full;
      auto block = [&](std::size_t at, std::size_t n) {
        __m256 v;
        __m256i a;
        if (n == 8) {
          v = _mm256_loadu_ps(g + oh * wo + at);
          a = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(where + oh * wo + at)));
        } else {
          const __m256i lanes = _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n)),
                                                   _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
          v = _mm256_maskload_ps(g + oh * wo + at, lanes);
          // 8 places (reserve() leaves room past the last one); lanes past n take one that matches nothing.
          a = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(where + oh * wo + at)));
          a = _mm256_blendv_epi8(_mm256_set1_epi32(kNoGradient), a, lanes);
        }
        auto at_place = [&](int p) { return _mm256_and_ps(v, _mm256_castsi256_ps(_mm256_cmpeq_epi32(a, _mm256_set1_epi32(p)))); };
        const __m256 e0 = at_place(0), o0 = at_place(1), e1 = at_place(2), o1 = at_place(3);
        // Interleave even and odd columns back into rows: 16 floats per row.
        auto rows = [](__m256 e, __m256 o, float* dst) {
          const __m256 lo = _mm256_unpacklo_ps(e, o), hi = _mm256_unpackhi_ps(e, o);
          _mm256_storeu_ps(dst, _mm256_permute2f128_ps(lo, hi, 0x20));
          _mm256_storeu_ps(dst + 8, _mm256_permute2f128_ps(lo, hi, 0x31));
        };
        rows(e0, o0, r0 + 2 * at);
        rows(e1, o1, r1 + 2 * at);
      };
      std::size_t done = full;  // windows [0, done) and the rest written by the vector loop
      if (rest > 0 && (2 * oh + 1) * w + 2 * full + 16 <= h * w) {
        block(full, rest);
        done = wo;
      }
      for (; ow < full; ow += 8) block(ow, 8);
      ow = done;
#endif
      for (; ow < wo; ++ow) {
        const std::uint16_t a = where[oh * wo + ow];
        const float v = g[oh * wo + ow];
        r0[2 * ow] = a == 0 ? v : 0.0f;
        r0[2 * ow + 1] = a == 1 ? v : 0.0f;
        r1[2 * ow] = a == 2 ? v : 0.0f;
        r1[2 * ow + 1] = a == 3 ? v : 0.0f;
      }
    }
    return;
  }
  std::fill_n(d, h * w, 0.0f);
  for (std::size_t oh = 0; oh < ho; ++oh)
    for (std::size_t ow = 0; ow < wo; ++ow) {
      const std::uint16_t a = where[oh * wo + ow];
      if (a == kNoGradient) continue;
      d[(oh * stride_ + a / pool_) * w + ow * stride_ + a % pool_] += g[oh * wo + ow];
    }
}

void MaxPool2D::backward(ConstTensorView in, ConstTensorView out, ConstTensorView dout, TensorView din) {
  if (din.empty()) return;
  const std::size_t planes = in.shape[0] * in.shape[1], h = in.shape[2], w = in.shape[3];
  for (std::size_t pl = 0; pl < planes; ++pl) backward_plane(h, w, out, dout, pl, din.data + pl * h * w);
}

}  // namespace scalelab::nn
