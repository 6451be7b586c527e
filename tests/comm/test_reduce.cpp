// The reduction kernels and the float16 conversions against plain references.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "comm/reduce.h"

namespace scalelab::comm {
namespace {

TEST(Half, EveryBitPatternRoundTripsThroughFloat) {
  for (std::uint32_t h = 0; h < 0x10000; ++h) {
    const float f = half_to_float(static_cast<std::uint16_t>(h));
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(half_to_float(float_to_half(f)))) << h;
      continue;
    }
    EXPECT_EQ(float_to_half(f), h) << "bits " << h << " value " << f;
  }
}

#if defined(__FLT16_MANT_DIG__)
TEST(Half, ConversionsAgreeWithTheCompilersFloat16) {
  for (std::uint32_t h = 0; h < 0x10000; ++h) {
    const auto bits = static_cast<std::uint16_t>(h);
    const float ours = half_to_float(bits);
    const float theirs = static_cast<float>(std::bit_cast<_Float16>(bits));
    if (std::isnan(theirs)) {
      EXPECT_TRUE(std::isnan(ours));
    } else {
      EXPECT_EQ(ours, theirs) << h;
    }
  }
  std::mt19937 gen(7);
  std::uniform_int_distribution<std::uint32_t> any;
  for (int i = 0; i < 200000; ++i) {
    const float f = std::bit_cast<float>(any(gen));
    if (std::isnan(f)) continue;
    EXPECT_EQ(float_to_half(f), std::bit_cast<std::uint16_t>(static_cast<_Float16>(f))) << f;
  }
}
#endif

TEST(Half, RoundsToNearestEvenAndSaturatesToInfinity) {
  EXPECT_EQ(float_to_half(1.0f), 0x3c00);
  EXPECT_EQ(float_to_half(2049.0f), float_to_half(2048.0f));  // tie: even mantissa
  EXPECT_EQ(float_to_half(2051.0f), float_to_half(2052.0f));
  EXPECT_EQ(float_to_half(65504.0f), 0x7bff);
  EXPECT_EQ(float_to_half(65520.0f), 0x7c00);
  EXPECT_EQ(float_to_half(-1e9f), 0xfc00);
  EXPECT_EQ(half_to_float(0x0001), std::ldexp(1.0f, -24));
}

template <typename T>
void expect_ops_match_reference(DataType type) {
  const std::size_t n = 1037;  // not a multiple of any vector width
  std::vector<T> a(n), b(n), out(n);
  for (std::size_t i = 0; i < n; ++i) {
    a[i] = static_cast<T>(static_cast<int>(i % 17) - 8);
    b[i] = static_cast<T>(static_cast<int>(i % 13) - 6);
  }
  for (const ReduceOp op : {ReduceOp::sum, ReduceOp::min, ReduceOp::max}) {
    reduce_to(out.data(), a.data(), b.data(), n, type, op);
    std::vector<T> acc = a;
    reduce_into(acc.data(), b.data(), n, type, op);
    for (std::size_t i = 0; i < n; ++i) {
      const T want = op == ReduceOp::sum ? static_cast<T>(a[i] + b[i]) : op == ReduceOp::min ? std::min(a[i], b[i])
                                                                                             : std::max(a[i], b[i]);
      ASSERT_EQ(out[i], want) << name_of(op) << " at " << i;
      ASSERT_EQ(acc[i], want) << name_of(op) << " in place at " << i;
    }
  }
}

TEST(Reduce, Float32Float64Int32MatchThePlainLoop) {
  expect_ops_match_reference<float>(DataType::f32);
  expect_ops_match_reference<double>(DataType::f64);
  expect_ops_match_reference<std::int32_t>(DataType::i32);
}

TEST(Reduce, Float16IsReducedInFloat32AndRoundedBack) {
  const std::size_t n = 1003;  // whole vectors of 8 and a tail
  std::vector<std::uint16_t> a(n), b(n), out(n);
  for (std::size_t i = 0; i < n; ++i) {
    a[i] = float_to_half(0.1f * static_cast<float>(i));
    b[i] = float_to_half(-0.37f * static_cast<float>(i % 29));
  }
  for (const ReduceOp op : {ReduceOp::sum, ReduceOp::min, ReduceOp::max}) {
    reduce_to(out.data(), a.data(), b.data(), n, DataType::f16, op);
    for (std::size_t i = 0; i < n; ++i) {
      const float x = half_to_float(a[i]), y = half_to_float(b[i]);
      const float r = op == ReduceOp::sum ? x + y : op == ReduceOp::min ? std::min(x, y) : std::max(x, y);
      ASSERT_EQ(out[i], float_to_half(r)) << name_of(op) << " at " << i;
    }
  }
}

TEST(Reduce, AverageDividesOnceAndTruncatesIntegersTowardZero) {
  std::vector<std::int32_t> ints{3, -3, 7, -7, 0};
  finish_reduction(ints.data(), ints.size(), DataType::i32, ReduceOp::avg, 2);
  EXPECT_EQ(ints, (std::vector<std::int32_t>{1, -1, 3, -3, 0}));
  std::vector<float> f{3.0f, 1.0f};
  finish_reduction(f.data(), f.size(), DataType::f32, ReduceOp::sum, 2);  // not avg: untouched
  EXPECT_EQ(f, (std::vector<float>{3.0f, 1.0f}));
  finish_reduction(f.data(), f.size(), DataType::f32, ReduceOp::avg, 4);
  EXPECT_EQ(f, (std::vector<float>{0.75f, 0.25f}));
  std::vector<std::uint16_t> h{float_to_half(3.0f)};
  finish_reduction(h.data(), 1, DataType::f16, ReduceOp::avg, 2);
  EXPECT_EQ(half_to_float(h[0]), 1.5f);
}

}  // namespace
}  // namespace scalelab::comm
