// The harness end to end on the local backend (ranks as threads): every collective, algorithm,
// type and operator at 1 to 4 ranks reports zero wrong elements in-place and out-of-place, the
// bandwidths follow from the times, --compare adds the library and the ratio, a predictor fills
// predicted_us, and ranks launched with different options fail with a usage error naming them.
#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <string>

#include "bench/runner.h"
#include "comm/local.h"
#include "core/error.h"

namespace scalelab::bench {
namespace {

using collectives::Collective;
using comm::DataType;
using comm::ReduceOp;

BenchOptions small_options(Collective c, const std::string& algo) {
  BenchOptions o;
  o.collective = c;
  o.algorithm = algo;
  o.types = {DataType::f32, DataType::f64, DataType::f16, DataType::i32};
  o.ops = {ReduceOp::sum, ReduceOp::avg, ReduceOp::min, ReduceOp::max};
  o.sweep = {.min_bytes = 0, .max_bytes = 1000, .step_factor = 1, .step_bytes = 200};  // 0, 200, ... 1000
  o.iters = 2;
  o.warmup_iters = 1;
  return o;
}

TEST(RunnerLocal, EveryAlgorithmTypeAndOpIsExactAtOneToFourRanks) {
  for (const auto c : {Collective::allreduce, Collective::broadcast, Collective::allgather, Collective::reduce_scatter}) {
    for (const auto& algo : collectives::algorithm_names(c)) {
      for (int n = 1; n <= 4; ++n) {
        BenchOptions o = small_options(c, algo);
        o.root = n - 1;
        std::mutex m;
        BenchResult seen;
        comm::run_local(n, [&](comm::Communicator& comm) {
          const BenchResult r = run_benchmark(comm, o);
          if (comm.rank() == 0) {
            std::lock_guard lock(m);
            seen = r;
          }
        });
        const std::string what = std::string(collectives::name_of(c)) + "/" + algo + " n=" + std::to_string(n);
        EXPECT_EQ(seen.summary.wrong_total, 0u) << what;
        const std::size_t ops = has_reduction(c) ? 4 : 1;
        ASSERT_EQ(seen.rows.size(), 4 * ops * 6) << what;
        for (const Row& row : seen.rows) {
          ASSERT_TRUE(row.out_of_place.wrong && row.in_place && row.in_place->wrong) << what;
          EXPECT_EQ(*row.out_of_place.wrong, 0u) << what << " size " << row.shape.size_bytes;
          EXPECT_EQ(*row.in_place->wrong, 0u) << what << " size " << row.shape.size_bytes << " in-place";
          EXPECT_EQ(row.root, has_root(c) ? n - 1 : -1);
        }
      }
    }
  }
}

TEST(RunnerLocal, BandwidthsFollowFromTheMedianTime) {
  BenchOptions o = small_options(Collective::allreduce, "ring");
  o.types = {DataType::f32};
  o.ops = {ReduceOp::sum};
  o.sweep = {.min_bytes = 4096, .max_bytes = 65536, .step_factor = 4};
  o.iters = 5;
  BenchResult seen;
  comm::run_local(3, [&](comm::Communicator& comm) {
    auto r = run_benchmark(comm, o);
    if (comm.rank() == 0) seen = r;
  });
  ASSERT_EQ(seen.rows.size(), 3u);
  double sum = 0;
  for (const Row& row : seen.rows) {
    const Measurement& m = row.out_of_place;
    EXPECT_GT(m.time_us, 0);
    EXPECT_LE(m.min_us, m.time_us);
    EXPECT_GE(m.max_us, m.time_us);
    EXPECT_DOUBLE_EQ(m.algbw_GBps, static_cast<double>(row.shape.size_bytes) / (m.time_us * 1e-6) / 1e9);
    EXPECT_DOUBLE_EQ(m.busbw_GBps, m.algbw_GBps * 2.0 * 2.0 / 3.0);
    sum += m.busbw_GBps + row.in_place->busbw_GBps;
  }
  EXPECT_DOUBLE_EQ(seen.summary.avg_busbw_GBps, sum / 6.0);
}

TEST(RunnerLocal, CompareTimesTheLibraryBesideTheAlgorithm) {
  BenchOptions o = small_options(Collective::allreduce, "ring");
  o.types = {DataType::f32};
  o.ops = {ReduceOp::sum};
  o.sweep = {.min_bytes = 1024, .max_bytes = 4096, .step_factor = 2};
  o.compare = true;
  BenchResult seen;
  comm::run_local(2, [&](comm::Communicator& comm) {
    auto r = run_benchmark(comm, o);
    if (comm.rank() == 0) seen = r;
  });
  ASSERT_EQ(seen.rows.size(), 3u);
  for (const Row& row : seen.rows) {
    ASSERT_TRUE(row.library && row.busbw_ratio);
    EXPECT_FALSE(row.in_place);
    EXPECT_EQ(row.library->algorithm, "library");
    EXPECT_EQ(*row.library->wrong, 0u);
    EXPECT_DOUBLE_EQ(*row.busbw_ratio, row.out_of_place.busbw_GBps / row.library->busbw_GBps);
  }
  ASSERT_TRUE(seen.summary.min_ratio && seen.summary.geomean_ratio);
}

TEST(RunnerLocal, APredictorFillsThePredictedTimeOfEveryRow) {
  BenchOptions o = small_options(Collective::allgather, "ring");
  o.types = {DataType::f64};
  o.sweep = {.min_bytes = 48, .max_bytes = 480, .step_factor = 10};
  o.predictor = [](const CaseKey& k) -> std::optional<double> {
    return static_cast<double>(k.size_bytes) * k.nranks;  // any function of the case
  };
  BenchResult seen;
  comm::run_local(3, [&](comm::Communicator& comm) {
    auto r = run_benchmark(comm, o);
    if (comm.rank() == 0) seen = r;
  });
  ASSERT_EQ(seen.rows.size(), 2u);
  for (const Row& row : seen.rows) {
    ASSERT_TRUE(row.predicted_us);
    EXPECT_DOUBLE_EQ(*row.predicted_us, static_cast<double>(row.shape.size_bytes) * 3);
  }
}

TEST(RunnerLocal, RanksWithDifferentSizesFailWithAUsageErrorNamingThem) {
  std::atomic<int> usage_errors{0};
  EXPECT_THROW(comm::run_local(3,
                               [&](comm::Communicator& comm) {
                                 BenchOptions o = small_options(Collective::allreduce, "ring");
                                 if (comm.rank() == 2) o.sweep.min_bytes = 400;
                                 try {
                                   (void)run_benchmark(comm, o);
                                 } catch (const Error& e) {
                                   if (e.kind() == ErrorKind::usage &&
                                       std::string(e.what()).find("rank 2 has 400") != std::string::npos) {
                                     ++usage_errors;
                                   }
                                   throw;
                                 }
                               }),
               Error);
  EXPECT_EQ(usage_errors.load(), 3);
}

}  // namespace
}  // namespace scalelab::bench
