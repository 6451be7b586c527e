// The benchmark's inputs have results known exactly: the closed forms in pattern.h match a
// brute-force reduction through the same kernels the algorithms use (comm/reduce.h), and
// count_wrong counts exactly the elements that differ.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "bench/pattern.h"
#include "comm/reduce.h"

namespace scalelab::bench {
namespace {

using collectives::Collective;
using comm::DataType;
using comm::ReduceOp;

const DataType kTypes[] = {DataType::f32, DataType::f64, DataType::f16, DataType::i32};
const ReduceOp kOps[] = {ReduceOp::sum, ReduceOp::avg, ReduceOp::min, ReduceOp::max};

TEST(Pattern, ClosedFormsEqualTheReductionOfTheInputs) {
  for (int n = 1; n <= 7; ++n) {
    for (std::size_t i = 0; i < 60; ++i) {
      double sum = 0, lo = 1e300, hi = -1e300;
      for (int r = 0; r < n; ++r) {
        const double v = input_value(r, n, i);
        EXPECT_EQ(v, std::floor(v)) << "inputs are integers";
        sum += v;
        lo = std::min(lo, v);
        hi = std::max(hi, v);
      }
      EXPECT_EQ(reduced_value(ReduceOp::sum, n, i), sum);
      EXPECT_EQ(reduced_value(ReduceOp::avg, n, i), sum / n);
      EXPECT_EQ(reduced_value(ReduceOp::min, n, i), lo);
      EXPECT_EQ(reduced_value(ReduceOp::max, n, i), hi);
    }
  }
}

TEST(Pattern, EveryRankHoldsDifferentValuesAtTheSameIndex) {
  for (int n = 2; n <= 5; ++n) {
    for (std::size_t i = 0; i < 20; ++i) {
      for (int r = 1; r < n; ++r) EXPECT_NE(input_value(r, n, i), input_value(0, n, i));
    }
  }
}

// Reduces every rank's buffer with comm::reduce_into in rank order, as a naive algorithm would,
// and checks the allreduce result counts zero wrong in every type and op.
TEST(Pattern, ReferenceReductionInEveryTypeAndOpIsCountedRight) {
  const std::size_t count = 1000;
  for (int n = 1; n <= 6; ++n) {
    for (const DataType t : kTypes) {
      for (const ReduceOp op : kOps) {
        const std::size_t bytes = count * comm::size_of(t);
        std::vector<unsigned char> acc(bytes), mine(bytes);
        fill_input(Collective::allreduce, t, 0, n, count, acc.data());
        for (int r = 1; r < n; ++r) {
          fill_input(Collective::allreduce, t, r, n, count, mine.data());
          comm::reduce_into(acc.data(), mine.data(), count, t, op);
        }
        comm::finish_reduction(acc.data(), count, t, op, n);
        EXPECT_EQ(count_wrong(Collective::allreduce, t, op, 0, n, 0, count, acc.data()), 0u)
            << comm::name_of(t) << " " << comm::name_of(op) << " n=" << n;
      }
    }
  }
}

TEST(Pattern, CountsExactlyTheCorruptedElements) {
  const int n = 3;
  const std::size_t count = 100;
  std::vector<float> out(count);
  for (std::size_t i = 0; i < count; ++i) out[i] = static_cast<float>(reduced_value(ReduceOp::sum, n, i));
  EXPECT_EQ(count_wrong(Collective::allreduce, DataType::f32, ReduceOp::sum, 0, n, 0, count, out.data()), 0u);
  out[3] += 1.0f;
  out[97] = -out[97];
  EXPECT_EQ(count_wrong(Collective::allreduce, DataType::f32, ReduceOp::sum, 0, n, 0, count, out.data()), 2u);
  poison(DataType::f32, count, out.data());
  EXPECT_EQ(count_wrong(Collective::allreduce, DataType::f32, ReduceOp::sum, 0, n, 0, count, out.data()), count);
  std::vector<std::int32_t> ints(count);
  poison(DataType::i32, count, ints.data());
  EXPECT_EQ(count_wrong(Collective::allreduce, DataType::i32, ReduceOp::min, 0, n, 0, count, ints.data()), count);
}

TEST(Pattern, AllgatherExpectsEachRanksBlockAtItsOffset) {
  const int n = 3;
  const std::size_t count = 10;
  std::vector<double> out(count * n);
  for (int q = 0; q < n; ++q) fill_input(Collective::allgather, DataType::f64, q, n, count, out.data() + q * count);
  EXPECT_EQ(count_wrong(Collective::allgather, DataType::f64, ReduceOp::sum, 1, n, 0, count, out.data()), 0u);
  std::swap(out[0], out[count]);  // rank 0's and rank 1's first elements exchanged
  EXPECT_EQ(count_wrong(Collective::allgather, DataType::f64, ReduceOp::sum, 1, n, 0, count, out.data()), 2u);
}

TEST(Pattern, ReduceScatterExpectsThisRanksBlockOfTheReduction) {
  const int n = 4;
  const std::size_t count = 9;
  for (int rank = 0; rank < n; ++rank) {
    std::vector<std::int32_t> out(count);
    for (std::size_t i = 0; i < count; ++i) {
      out[i] = static_cast<std::int32_t>(reduced_value(ReduceOp::max, n, rank * count + i));
    }
    EXPECT_EQ(count_wrong(Collective::reduce_scatter, DataType::i32, ReduceOp::max, rank, n, 0, count, out.data()), 0u);
    EXPECT_EQ(count_wrong(Collective::reduce_scatter, DataType::i32, ReduceOp::max, (rank + 1) % n, n, 0, count,
                          out.data()),
              count)
        << "a(i) has period 13, so the neighbouring block (9 elements on) differs everywhere";
  }
}

TEST(Pattern, BroadcastExpectsTheRootsInput) {
  const int n = 3;
  const std::size_t count = 50;
  std::vector<std::uint16_t> out(count);
  fill_input(Collective::broadcast, DataType::f16, 2, n, count, out.data());
  EXPECT_EQ(count_wrong(Collective::broadcast, DataType::f16, ReduceOp::sum, 0, n, 2, count, out.data()), 0u);
  EXPECT_EQ(count_wrong(Collective::broadcast, DataType::f16, ReduceOp::sum, 0, n, 1, count, out.data()), count);
}

}  // namespace
}  // namespace scalelab::bench
