// Reduction kernels (reduce.h): plain loops over restrict-qualified pointers that GCC vectorises
// (AVX-512 here with -march=native). float16 goes through the F16C conversion instructions
// where the target has them (x86-64 since 2012) and through the bit-level reference otherwise.
#include "comm/reduce.h"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>

#if defined(__F16C__)
#include <immintrin.h>
#endif

namespace scalelab::comm {
namespace {

template <typename T>
struct Sum {
  static T apply(T a, T b) { return a + b; }
};
template <typename T>
struct Min {
  static T apply(T a, T b) { return b < a ? b : a; }
};
template <typename T>
struct Max {
  static T apply(T a, T b) { return a < b ? b : a; }
};

// out[i] = a[i] op b[i]. out may equal a or b exactly; the loop reads both before writing, so
// exact aliasing is safe, but the restrict promise is only made for the non-aliasing case.
template <typename T, typename Op>
void combine_distinct(T* __restrict out, const T* __restrict a, const T* __restrict b, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) out[i] = Op::apply(a[i], b[i]);
}
template <typename T, typename Op>
void combine_into(T* __restrict acc, const T* __restrict in, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) acc[i] = Op::apply(acc[i], in[i]);
}

template <typename T, typename Op>
void combine(T* out, const T* a, const T* b, std::size_t n) {
  if (out == a) {
    combine_into<T, Op>(out, b, n);
  } else if (out == b) {
    combine_into<T, Op>(out, a, n);  // every op here is commutative
  } else {
    combine_distinct<T, Op>(out, a, b, n);
  }
}

template <typename T>
void combine_op(T* out, const T* a, const T* b, std::size_t n, ReduceOp op) {
  switch (op) {
    case ReduceOp::sum:
    case ReduceOp::avg: combine<T, Sum<T>>(out, a, b, n); return;
    case ReduceOp::min: combine<T, Min<T>>(out, a, b, n); return;
    case ReduceOp::max: combine<T, Max<T>>(out, a, b, n); return;
  }
}

#if defined(__F16C__)
// Eight halves at a time with the F16C conversions (GCC 12 does not vectorise _Float16 <-> float
// on CPUs without AVX512-FP16); the rounding mode is round to nearest even, as float_to_half.
// Operands are ordered so NaN and signed-zero cases pick the same element as the scalar ops.
inline __m256 apply8(Sum<float>, __m256 a, __m256 b) { return _mm256_add_ps(a, b); }
inline __m256 apply8(Min<float>, __m256 a, __m256 b) { return _mm256_min_ps(b, a); }
inline __m256 apply8(Max<float>, __m256 a, __m256 b) { return _mm256_max_ps(b, a); }

template <typename Op>
void combine_half(std::uint16_t* out, const std::uint16_t* a, const std::uint16_t* b, std::size_t n) {
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 x = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(a + i)));
    const __m256 y = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b + i)));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), _mm256_cvtps_ph(apply8(Op{}, x, y), _MM_FROUND_TO_NEAREST_INT));
  }
  for (; i < n; ++i) out[i] = float_to_half(Op::apply(half_to_float(a[i]), half_to_float(b[i])));
}
#else
template <typename Op>
void combine_half(std::uint16_t* out, const std::uint16_t* a, const std::uint16_t* b, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    out[i] = float_to_half(Op::apply(half_to_float(a[i]), half_to_float(b[i])));
  }
}
#endif

void combine_half_op(std::uint16_t* out, const std::uint16_t* a, const std::uint16_t* b,
                     std::size_t n, ReduceOp op) {
  switch (op) {
    case ReduceOp::sum:
    case ReduceOp::avg: combine_half<Sum<float>>(out, a, b, n); return;
    case ReduceOp::min: combine_half<Min<float>>(out, a, b, n); return;
    case ReduceOp::max: combine_half<Max<float>>(out, a, b, n); return;
  }
}

}  // namespace

void reduce_to(void* out, const void* a, const void* b, std::size_t count, DataType type, ReduceOp op) {
  if (count == 0) return;
  switch (type) {
    case DataType::f32:
      combine_op(static_cast<float*>(out), static_cast<const float*>(a), static_cast<const float*>(b), count, op);
      return;
    case DataType::f64:
      combine_op(static_cast<double*>(out), static_cast<const double*>(a), static_cast<const double*>(b), count, op);
      return;
    case DataType::i32:
      combine_op(static_cast<std::int32_t*>(out), static_cast<const std::int32_t*>(a),
                 static_cast<const std::int32_t*>(b), count, op);
      return;
    case DataType::f16:
      combine_half_op(static_cast<std::uint16_t*>(out), static_cast<const std::uint16_t*>(a),
                      static_cast<const std::uint16_t*>(b), count, op);
      return;
  }
}

void reduce_into(void* acc, const void* incoming, std::size_t count, DataType type, ReduceOp op) {
  reduce_to(acc, acc, incoming, count, type, op);
}

void finish_reduction(void* buf, std::size_t count, DataType type, ReduceOp op, int nranks) {
  if (op != ReduceOp::avg || nranks <= 1 || count == 0) return;
  switch (type) {
    case DataType::f32: {
      auto* p = static_cast<float*>(buf);
      const float d = static_cast<float>(nranks);
      for (std::size_t i = 0; i < count; ++i) p[i] /= d;
      return;
    }
    case DataType::f64: {
      auto* p = static_cast<double*>(buf);
      const double d = nranks;
      for (std::size_t i = 0; i < count; ++i) p[i] /= d;
      return;
    }
    case DataType::i32: {
      auto* p = static_cast<std::int32_t*>(buf);
      for (std::size_t i = 0; i < count; ++i) p[i] /= nranks;  // truncates toward zero
      return;
    }
    case DataType::f16: {
      auto* p = static_cast<std::uint16_t*>(buf);
      const float d = static_cast<float>(nranks);
      for (std::size_t i = 0; i < count; ++i) p[i] = float_to_half(half_to_float(p[i]) / d);
      return;
    }
  }
}

float half_to_float(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  std::uint32_t exp = (h >> 10) & 0x1fu;
  std::uint32_t mant = h & 0x3ffu;
  std::uint32_t bits;
  if (exp == 0x1f) {  // infinity or NaN
    bits = sign | 0x7f800000u | (mant << 13);
  } else if (exp != 0) {  // normal
    bits = sign | ((exp + 112u) << 23) | (mant << 13);
  } else if (mant == 0) {  // zero
    bits = sign;
  } else {  // subnormal: normalise
    exp = 113;
    while ((mant & 0x400u) == 0) {
      mant <<= 1;
      --exp;
    }
    bits = sign | (exp << 23) | ((mant & 0x3ffu) << 13);
  }
  return std::bit_cast<float>(bits);
}

std::uint16_t float_to_half(float f) {
  const std::uint32_t x = std::bit_cast<std::uint32_t>(f);
  const std::uint16_t sign = static_cast<std::uint16_t>((x >> 16) & 0x8000u);
  const std::uint32_t abs = x & 0x7fffffffu;
  if (abs >= 0x7f800000u) {  // infinity or NaN (keep a quiet NaN)
    return static_cast<std::uint16_t>(sign | 0x7c00u | (abs > 0x7f800000u ? 0x200u : 0u));
  }
  if (abs >= 0x477ff000u) return static_cast<std::uint16_t>(sign | 0x7c00u);  // rounds to infinity
  if (abs < 0x38800000u) {  // below the smallest normal half: subnormal or zero
    if (abs < 0x33000000u) return sign;  // below half the smallest subnormal: rounds to zero
    const std::uint32_t e = abs >> 23;
    const std::uint32_t m = (abs & 0x7fffffu) | 0x800000u;
    const std::uint32_t shift = 126u - e;  // 14..24
    std::uint32_t half = m >> shift;
    const std::uint32_t rem = m & ((1u << shift) - 1u);
    const std::uint32_t mid = 1u << (shift - 1u);
    if (rem > mid || (rem == mid && (half & 1u))) ++half;
    return static_cast<std::uint16_t>(sign | half);
  }
  // Normal: rebias the exponent, round the 13 dropped mantissa bits to nearest even.
  std::uint32_t h = ((abs - 0x38000000u) >> 13);
  const std::uint32_t rem = abs & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;  // may carry into the exponent: correct
  return static_cast<std::uint16_t>(sign | h);
}

}  // namespace scalelab::comm
