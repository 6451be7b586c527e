// The size sweep and per-collective shapes follow nccl-tests: -b..-e by -f or -i, sizes checked
// against the type, allgather/reduce-scatter sizes as the whole buffer, busbw factors from
// PERFORMANCE.md's derivation.
#include <gtest/gtest.h>

#include "bench/sweep.h"
#include "core/error.h"

namespace scalelab::bench {
namespace {

using collectives::Collective;

TEST(SizeSweep, MultipliesByTheStepFactorUpToTheMaximum) {
  const auto sizes = size_sweep({.min_bytes = 1024, .max_bytes = 16 << 20, .step_factor = 4}, 4);
  std::vector<std::uint64_t> expected;
  for (std::uint64_t s = 1024; s <= (16u << 20); s *= 4) expected.push_back(s);
  EXPECT_EQ(sizes, expected);
  EXPECT_EQ(sizes.back(), 16u << 20);
}

TEST(SizeSweep, StepsByBytesWhenTheFactorIsOne) {
  const auto sizes = size_sweep({.min_bytes = 8, .max_bytes = 40, .step_factor = 1, .step_bytes = 16}, 8);
  EXPECT_EQ(sizes, (std::vector<std::uint64_t>{8, 24, 40}));
}

TEST(SizeSweep, SingleSizeWhenMinEqualsMax) {
  EXPECT_EQ(size_sweep({.min_bytes = 4096, .max_bytes = 4096, .step_factor = 2}, 2).size(), 1u);
  EXPECT_EQ(size_sweep({.min_bytes = 0, .max_bytes = 0, .step_factor = 2}, 4), (std::vector<std::uint64_t>{0}));
}

TEST(SizeSweep, RejectsMinAboveMaxAndSizesThatAreNotWholeElements) {
  EXPECT_THROW((void)size_sweep({.min_bytes = 2 << 20, .max_bytes = 1 << 20}, 4), Error);
  EXPECT_THROW((void)size_sweep({.min_bytes = 6, .max_bytes = 6}, 4), Error);
  EXPECT_THROW((void)size_sweep({.min_bytes = 8, .max_bytes = 64, .step_factor = 1, .step_bytes = 4}, 8), Error);
  EXPECT_THROW((void)size_sweep({.min_bytes = 0, .max_bytes = 64, .step_factor = 2}, 4), Error);
  try {
    (void)size_sweep({.min_bytes = 2 << 20, .max_bytes = 1 << 20}, 4);
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), 2);
    EXPECT_EQ(e.parameter(), "min_bytes");  // the CLI prints -b/--minbytes in its place
  }
}

// Counted before any is stored: 4 B steps up to 1 TiB would be 2.7e11 sizes (and the memory).
TEST(SizeSweep, RefusesMoreSizesThanTheBoundBeforeStoringThem) {
  EXPECT_EQ(size_sweep({.min_bytes = 4, .max_bytes = 4 * kMaxSweepSizes, .step_factor = 1, .step_bytes = 4}, 4).size(),
            kMaxSweepSizes);
  try {
    (void)size_sweep({.min_bytes = 4, .max_bytes = 4 * kMaxSweepSizes + 4, .step_factor = 1, .step_bytes = 4}, 4);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), 2);
    EXPECT_EQ(e.parameter(), "step_bytes");
    EXPECT_NE(std::string(e.what()).find("10001 sizes"), std::string::npos) << e.what();
  }
  EXPECT_THROW((void)size_sweep({.min_bytes = 4, .max_bytes = 1ull << 40, .step_factor = 1, .step_bytes = 4}, 4), Error);
  // A factor reaches any size in at most 64 steps.
  EXPECT_EQ(size_sweep({.min_bytes = 1, .max_bytes = ~0ull, .step_factor = 2}, 1).size(), 64u);
}

TEST(CaseShape, AllreduceAndBroadcastCountTheWholeBuffer) {
  for (const auto c : {Collective::allreduce, Collective::broadcast}) {
    const CaseShape s = case_shape(c, 1 << 20, 4, 3);
    EXPECT_EQ(s.size_bytes, 1u << 20);
    EXPECT_EQ(s.count, (1u << 20) / 4);
    EXPECT_EQ(s.call_count, s.count);
    EXPECT_EQ(s.send_elems, s.count);
    EXPECT_EQ(s.recv_elems, s.count);
  }
}

TEST(CaseShape, AllgatherAndReduceScatterSplitTheSizeOverRanksRoundingDown) {
  const int n = 3;
  const std::uint64_t size = 1 << 20;  // 262144 floats, not a multiple of 3
  const std::size_t per_rank = (size / 4) / n;
  const CaseShape ag = case_shape(Collective::allgather, size, 4, n);
  EXPECT_EQ(ag.call_count, per_rank);
  EXPECT_EQ(ag.send_elems, per_rank);
  EXPECT_EQ(ag.recv_elems, per_rank * n);
  EXPECT_EQ(ag.size_bytes, per_rank * n * 4);
  const CaseShape rs = case_shape(Collective::reduce_scatter, size, 4, n);
  EXPECT_EQ(rs.call_count, per_rank);
  EXPECT_EQ(rs.send_elems, per_rank * n);
  EXPECT_EQ(rs.recv_elems, per_rank);
  EXPECT_EQ(rs.size_bytes, ag.size_bytes);
  EXPECT_EQ(case_shape(Collective::allgather, 8, 4, 3).call_count, 0u);  // fewer elements than ranks
}

// Bus bandwidth: the bytes each rank's busiest link carries per byte of algbw. Ring allreduce
// sends 2(n-1) chunks of size/n; allgather and reduce-scatter (n-1) chunks; broadcast the buffer once.
TEST(BusBandwidth, FactorsAreTheRingTrafficPerRank) {
  for (int n = 1; n <= 8; ++n) {
    const double chunk = 1.0 / n;
    EXPECT_DOUBLE_EQ(busbw_factor(Collective::allreduce, n), 2.0 * (n - 1) * chunk);
    EXPECT_DOUBLE_EQ(busbw_factor(Collective::allgather, n), (n - 1) * chunk);
    EXPECT_DOUBLE_EQ(busbw_factor(Collective::reduce_scatter, n), (n - 1) * chunk);
    EXPECT_DOUBLE_EQ(busbw_factor(Collective::broadcast, n), 1.0);
  }
  EXPECT_DOUBLE_EQ(busbw_factor(Collective::allreduce, 2), 1.0);
  EXPECT_DOUBLE_EQ(busbw_factor(Collective::allreduce, 4), 1.5);
}

// A factor that steps past -e says where it stopped, so that "-e 1G -f 4" ending at 512 MiB is
// not taken for a limit of the machine.
TEST(Sweep, SaysWhenItStopsBelowTheLargestSize) {
  const SweepSpec f4{.min_bytes = 8, .max_bytes = 1ull << 30, .step_factor = 4};
  EXPECT_EQ(sweep_end_note(f4, size_sweep(f4, 4)), "# sizes stop at 512 MiB: the next (2 GiB) would pass -e 1 GiB");
  const SweepSpec f2{.min_bytes = 8, .max_bytes = 1ull << 30, .step_factor = 2};
  EXPECT_EQ(sweep_end_note(f2, size_sweep(f2, 4)), "");
  const SweepSpec step{.min_bytes = 1024, .max_bytes = 5000, .step_factor = 1, .step_bytes = 1024};
  EXPECT_EQ(sweep_end_note(step, size_sweep(step, 4)), "# sizes stop at 4 KiB: the next (5 KiB) would pass -e 5000 B");
}

}  // namespace
}  // namespace scalelab::bench
