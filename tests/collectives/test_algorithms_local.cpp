// Every algorithm of every collective against the reference (collective_check.h), on the local
// backend at 1..5 ranks: all types, ops, edge counts, in place and out of place. Also: a second
// call at the same size allocates no scratch, and the ring's scratch is a segment, not a buffer.
#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <vector>

#include "collective_check.h"
#include "collectives/algorithm.h"
#include "comm/local.h"
#include "core/error.h"

namespace scalelab::test {
namespace {

using collectives::Collective;

struct Named {
  Collective collective;
  std::string name;
};

std::vector<Named> every_algorithm() {
  std::vector<Named> all;
  for (const Collective c :
       {Collective::allreduce, Collective::broadcast, Collective::allgather, Collective::reduce_scatter}) {
    for (const auto& n : collectives::algorithm_names(c)) all.push_back({c, n});
  }
  return all;
}

class EveryAlgorithm : public ::testing::TestWithParam<Named> {};

TEST_P(EveryAlgorithm, MatchesTheReferenceAtOneToFiveRanks) {
  const Named& a = GetParam();
  for (int p = 1; p <= 5; ++p) {
    std::vector<std::vector<std::string>> failures(static_cast<std::size_t>(p));
    comm::run_local(p, [&](comm::Communicator& comm) {
      auto algo = collectives::make_algorithm(a.collective, a.name);
      failures[static_cast<std::size_t>(comm.rank())] = check_all_cases(comm, *algo);
    });
    for (const auto& per_rank : failures) {
      EXPECT_TRUE(per_rank.empty()) << per_rank.size() << " failing cases, first: " << per_rank.front();
    }
  }
}

TEST_P(EveryAlgorithm, ReusesItsScratchAcrossCallsOfTheSameSize) {
  const Named& a = GetParam();
  constexpr std::size_t kCount = 100'003;
  std::vector<std::size_t> first(3), second(3);
  comm::run_local(3, [&](comm::Communicator& comm) {
    auto algo = collectives::make_algorithm(a.collective, a.name);
    const std::size_t in = a.collective == Collective::reduce_scatter ? 3 * kCount : kCount;
    const std::size_t out = a.collective == Collective::allgather ? 3 * kCount : kCount;
    std::vector<float> send(in, 1.0f), recv(out);
    const auto r = static_cast<std::size_t>(comm.rank());
    algo->run(comm, send.data(), recv.data(), kCount, comm::DataType::f32, comm::ReduceOp::sum, 0);
    first[r] = algo->scratch_bytes();
    algo->run(comm, send.data(), recv.data(), kCount, comm::DataType::f32, comm::ReduceOp::sum, 0);
    algo->run(comm, send.data(), recv.data(), kCount / 2, comm::DataType::f32, comm::ReduceOp::sum, 0);
    second[r] = algo->scratch_bytes();
  });
  EXPECT_EQ(first, second) << "a later call of the same or a smaller size grew the scratch";
}

std::string test_name(const ::testing::TestParamInfo<Named>& info) {
  std::string n = std::string(collectives::name_of(info.param.collective)) + "_" + info.param.name;
  for (char& ch : n) {
    if (ch == '-') ch = '_';
  }
  return n;
}

INSTANTIATE_TEST_SUITE_P(Collectives, EveryAlgorithm, ::testing::ValuesIn(every_algorithm()), test_name);

TEST(RingAllreduce, ScratchIsOneSegmentNotTheWholeBuffer) {
  constexpr std::size_t kCount = 4 << 20;  // 16 MiB of float32: blocks of 8 MiB, segments of 1 MiB
  comm::run_local(2, [&](comm::Communicator& comm) {
    auto algo = collectives::make_algorithm(Collective::allreduce, "ring");
    std::vector<float> buf(kCount, 1.0f);
    algo->run(comm, buf.data(), buf.data(), kCount, comm::DataType::f32, comm::ReduceOp::sum, 0);
    EXPECT_LE(algo->scratch_bytes(), 1u << 20);
    EXPECT_GT(algo->scratch_bytes(), 0u);
    EXPECT_EQ(buf.front(), 2.0f);
    EXPECT_EQ(buf.back(), 2.0f);
  });
}

TEST(AlgorithmTable, UnknownNamesAreUsageErrorsListingTheValidOnes) {
  try {
    (void)collectives::make_algorithm(Collective::allreduce, "butterfly");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::usage);
    const std::string m = e.what();
    EXPECT_NE(m.find("--algo"), std::string::npos) << m;
    EXPECT_NE(m.find("butterfly"), std::string::npos) << m;
    EXPECT_NE(m.find("rabenseifner"), std::string::npos) << m;
  }
  EXPECT_EQ(collectives::parse_collective("reduce-scatter", "bench"), Collective::reduce_scatter);
  EXPECT_THROW((void)collectives::parse_collective("alltoall", "bench"), Error);
}

}  // namespace
}  // namespace scalelab::test
