// Dropout forward and backward (see dropout.h).
#include "nn/dropout.h"

#include <immintrin.h>

#include <algorithm>
#include <cmath>

namespace scalelab::nn {
namespace {

// splitmix64 finaliser: a good 64-bit hash of (key + counter). (The AVX-512 path computes it in
// vectors: keep_bits.)
[[maybe_unused]] inline std::uint64_t mix(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

}  // namespace

Dropout::Dropout(float rate) : rate_(rate) {
  if (!(rate >= 0.0f && rate < 1.0f)) throw_usage("Dropout rate " + std::to_string(rate) + ": it must be in [0, 1)");
}

void Dropout::reserve(const Shape& in_shape, std::size_t max_batch) {
  keep_.assign((max_batch * in_shape.numel() + 63) / 64, 0u);
}

namespace {

// The keep bits of elements [4 * j0, 4 * j0 + 64): bit 4t + u is draw u of group j0 + t, kept when
// it is >= threshold (at most 0xFFFF). With AVX-512 the sixteen hashes as two vectors of eight,
// whose 16-bit draws compared as 32 words give the bits in that order.
inline std::uint64_t keep_bits(std::uint64_t key, std::size_t j0, std::uint32_t threshold) {
#if defined(__AVX512BW__) && defined(__AVX512DQ__)
  const __m512i k = _mm512_set1_epi64(static_cast<long long>(key));
  const __m512i golden = _mm512_set1_epi64(static_cast<long long>(0x9E3779B97F4A7C15ull));
  const __m512i c1 = _mm512_set1_epi64(static_cast<long long>(0xBF58476D1CE4E5B9ull));
  const __m512i c2 = _mm512_set1_epi64(static_cast<long long>(0x94D049BB133111EBull));
  const __m512i thr = _mm512_set1_epi16(static_cast<short>(threshold));
  std::uint64_t bits = 0;
  for (std::size_t half = 0; half < 2; ++half) {
    const __m512i j = _mm512_add_epi64(_mm512_set1_epi64(static_cast<long long>(j0 + 8 * half + 1)),
                                       _mm512_setr_epi64(0, 1, 2, 3, 4, 5, 6, 7));
    __m512i z = _mm512_add_epi64(k, _mm512_mullo_epi64(golden, j));
    // (The zero-masked shifts: GCC 12 warns about the unmasked ones' undefined pass-through.)
    z = _mm512_mullo_epi64(_mm512_xor_si512(z, _mm512_maskz_srli_epi64(0xFF, z, 30)), c1);
    z = _mm512_mullo_epi64(_mm512_xor_si512(z, _mm512_maskz_srli_epi64(0xFF, z, 27)), c2);
    z = _mm512_xor_si512(z, _mm512_maskz_srli_epi64(0xFF, z, 31));
    bits |= std::uint64_t{_mm512_cmpge_epu16_mask(z, thr)} << (32 * half);
  }
  return bits;
#else
  std::uint64_t bits = 0;
  for (std::size_t t = 0; t < 16; ++t) {
    const std::uint64_t r = mix(key + 0x9E3779B97F4A7C15ull * (j0 + t + 1));
    for (std::size_t u = 0; u < 4; ++u)
      bits |= std::uint64_t{static_cast<std::uint32_t>((r >> (16 * u)) & 0xFFFFu) >= threshold} << (4 * t + u);
  }
  return bits;
#endif
}

// x[0..len) times 0 or `scale`, as bit i of `bits` says (len <= 64): x * 0.0f where dropped, so
// signed zeros and non-finite values come out as a multiplication by the mask would give them.
inline void scale_kept(const float* x, float* y, std::size_t len, std::uint64_t bits, float scale) {
  std::size_t i = 0;
#if defined(__AVX512F__)
  const __m512 s = _mm512_set1_ps(scale);
  for (; i + 16 <= len; i += 16) {
    const auto k = static_cast<__mmask16>(bits >> i);
    _mm512_storeu_ps(y + i, _mm512_mul_ps(_mm512_loadu_ps(x + i), _mm512_maskz_mov_ps(k, s)));
  }
#endif
  for (; i < len; ++i) y[i] = x[i] * (((bits >> i) & 1u) != 0 ? scale : 0.0f);
}

}  // namespace

void Dropout::forward(ConstTensorView in, TensorView out, bool training) {
  const std::size_t n = in.numel();
  last_training_ = training && rate_ > 0.0f;
  if (!last_training_) {
    std::copy_n(in.data, n, out.data);
    return;
  }
  const std::uint64_t key = rng_.next_u64();
  // Keep when a 16-bit uniform draw is >= rate * 65536 (the rate's resolution is 1/65536: 0.25 and
  // 0.5 are exact); four draws per 64-bit hash of (key, group of four elements). One pass: 64
  // elements' draws into one word of bits (kept for backward), then those elements scaled.
  const auto threshold = static_cast<std::uint32_t>(std::lround(double(rate_) * 65536.0));
  scale_ = 1.0f / (1.0f - rate_);
  for (std::size_t b = 0; b < n; b += 64) {
    const std::uint64_t bits = threshold > 0xFFFFu ? 0 : keep_bits(key, b / 4, threshold);
    keep_[b / 64] = bits;
    scale_kept(in.data + b, out.data + b, std::min<std::size_t>(64, n - b), bits, scale_);
  }
}

void Dropout::backward(ConstTensorView /*in*/, ConstTensorView /*out*/, ConstTensorView dout, TensorView din) {
  if (din.empty()) return;
  const std::size_t n = dout.numel();
  if (!last_training_) {
    std::copy_n(dout.data, n, din.data);
    return;
  }
  for (std::size_t b = 0; b < n; b += 64)
    scale_kept(dout.data + b, din.data + b, std::min<std::size_t>(64, n - b), keep_[b / 64], scale_);
}

}  // namespace scalelab::nn
