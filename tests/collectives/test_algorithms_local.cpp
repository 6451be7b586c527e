// Every algorithm of every collective against the reference (collective_check.h), on the local
// backend at 1..5 ranks: all types, ops, edge counts, in place and out of place. Also: a second
// call at the same size allocates no scratch, the ring's scratch is a segment, not a buffer, and
// the point-to-point algorithms refuse device memory.
#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <vector>

#include "collective_check.h"
#include "collectives/algorithm.h"
#include "collectives/choice.h"
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

// Buffers in node memory (Communicator::shared_buffer): the shared-memory allreduce reads them on
// the peers in place (nothing staged) and stays exact at 1..5 ranks; where one rank's buffers are
// ordinary memory, every rank falls back to staging, and stays exact too.
TEST(SharedMemoryAllreduce, ReadsSharedBuffersInPlaceAndFallsBackWhenOneRankHasNone) {
  for (int p = 1; p <= 5; ++p) {
    for (const bool all_shared : {true, false}) {
      std::vector<std::vector<std::string>> failures(static_cast<std::size_t>(p));
      std::vector<std::uint64_t> staged(static_cast<std::size_t>(p));
      comm::run_local(p, [&](comm::Communicator& comm) {
        auto algo = collectives::make_algorithm(Collective::allreduce, "shm");
        unsigned char* memory = comm.shared_buffer(check_memory_bytes(comm.size()));
        ASSERT_NE(memory, nullptr);
        const bool mine = all_shared || comm.rank() != comm.size() - 1;
        failures[static_cast<std::size_t>(comm.rank())] = check_all_cases(comm, *algo, mine ? memory : nullptr);
        staged[static_cast<std::size_t>(comm.rank())] = algo->staged_bytes();
      });
      for (int r = 0; r < p; ++r) {
        const auto& f = failures[static_cast<std::size_t>(r)];
        EXPECT_TRUE(f.empty()) << p << " ranks, " << (all_shared ? "all" : "all but one") << " shared: "
                               << f.size() << " failing cases, first: " << f.front();
        if (all_shared || p == 1) {
          EXPECT_EQ(staged[static_cast<std::size_t>(r)], 0U) << "rank " << r << " of " << p << " staged its input";
        } else {
          EXPECT_GT(staged[static_cast<std::size_t>(r)], 0U) << "rank " << r << " of " << p << " read a buffer "
                                                              << "that was not shared";
        }
      }
    }
  }
}

// --algo auto's choice (collectives/choice.h): every rank gets rank 0's answer, whatever its own
// chooser would say; no chooser or no answer is ""; a name of another collective is an error.
TEST(ChooseAlgorithm, EveryRankGetsRankZerosAnswer) {
  for (const int p : {2, 3}) {
    std::vector<std::string> got(static_cast<std::size_t>(p)), none(static_cast<std::size_t>(p));
    comm::run_local(p, [&](comm::Communicator& comm) {
      const auto me = static_cast<std::size_t>(comm.rank());
      collectives::ChoiceQuery asked{Collective::broadcast, 1e6};
      asked.in_place = true;
      asked.uniform_nodes = false;  // choose_algorithm says what the communicator says
      got[me] = collectives::choose_algorithm(comm, asked, [&](const collectives::ChoiceQuery& q) {
        EXPECT_EQ(q.collective, Collective::broadcast);
        EXPECT_EQ(q.bytes, 1e6);
        EXPECT_EQ(q.ranks, p);
        EXPECT_TRUE(q.in_place);
        EXPECT_TRUE(q.uniform_nodes);
        return std::string(comm.rank() == 0 ? "tree" : "naive");
      });
      none[me] = collectives::choose_algorithm(comm, asked, {});
    });
    for (int r = 0; r < p; ++r) {
      EXPECT_EQ(got[static_cast<std::size_t>(r)], "tree") << "rank " << r;
      EXPECT_EQ(none[static_cast<std::size_t>(r)], "") << "rank " << r;
    }
  }
  comm::run_local(2, [&](comm::Communicator& comm) {
    if (comm.rank() != 0) return;  // rank 1 would wait in the exchange rank 0 never reaches
    EXPECT_THROW((void)collectives::choose_algorithm(comm, collectives::ChoiceQuery{Collective::broadcast, 1e6},
                                                     [](const collectives::ChoiceQuery&) { return std::string("shm"); }),
                 Error);
  });
}

TEST(ChooseAlgorithm, ShmRunsOnlyWhereEveryNodeHasAsManyRanks) {
  collectives::ChoiceQuery q{Collective::allreduce, 1e6};
  const auto& shm = collectives::find_algorithm(Collective::allreduce, "shm");
  const auto& ring = collectives::find_algorithm(Collective::allreduce, "ring");
  EXPECT_TRUE(collectives::can_run(shm, q));
  q.uniform_nodes = false;
  EXPECT_FALSE(collectives::can_run(shm, q));
  EXPECT_TRUE(collectives::can_run(ring, q));
}

TEST(RingAllreduce, CutsLargeBlocksIntoSegmentsAndStaysExact) {
  // 3 ranks x ~2 MB blocks: each step goes in several segments of unequal length, the path the
  // edge-count matrix above (at most 65537 elements) does not reach.
  constexpr std::size_t kCount = 1'500'007;
  std::vector<std::string> failures;
  std::vector<std::size_t> scratch(3);
  comm::run_local(3, [&](comm::Communicator& comm) {
    auto algo = collectives::make_algorithm(Collective::allreduce, "ring");
    for (const bool in_place : {false, true}) {
      for (const auto& [type, op] : {std::pair{comm::DataType::f32, comm::ReduceOp::sum},
                                     std::pair{comm::DataType::f64, comm::ReduceOp::avg},
                                     std::pair{comm::DataType::f16, comm::ReduceOp::max}}) {
        std::string f = check_collective(comm, *algo, CheckCase{kCount, type, op, in_place, 0});
        if (comm.rank() == 0 && !f.empty()) failures.push_back(f);
      }
    }
    scratch[static_cast<std::size_t>(comm.rank())] = algo->scratch_bytes();
  });
  EXPECT_TRUE(failures.empty()) << failures.front();
  for (const std::size_t bytes : scratch) {
    EXPECT_GT(bytes, 0u);
    EXPECT_LT(bytes, kCount * sizeof(float) / 3) << "scratch should be one segment, less than one block";
  }
}

// A two-rank communicator whose buffers would live on a GPU; any transfer is an error.
class DeviceMemoryStub final : public comm::Communicator {
 public:
  [[nodiscard]] int rank() const override { return 0; }
  [[nodiscard]] int size() const override { return 2; }
  [[nodiscard]] int local_rank() const override { return 0; }
  [[nodiscard]] int local_size() const override { return 2; }
  [[nodiscard]] std::string backend() const override { return "nccl"; }
  [[nodiscard]] comm::MemorySpace memory_space() const override { return comm::MemorySpace::device; }
  void send(const void*, std::size_t, int, int) override { no_transfer(); }
  void recv(void*, std::size_t, int, int) override { no_transfer(); }
  void sendrecv(const void*, std::size_t, int, void*, std::size_t, int, int) override { no_transfer(); }
  void allreduce(const void*, void*, std::size_t, comm::DataType, comm::ReduceOp) override { no_transfer(); }
  void broadcast(void*, std::size_t, comm::DataType, int) override { no_transfer(); }
  void allgather(const void*, void*, std::size_t, comm::DataType) override { no_transfer(); }
  void reduce_scatter(const void*, void*, std::size_t, comm::DataType, comm::ReduceOp) override { no_transfer(); }
  void barrier() override { no_transfer(); }
  void local_copy(void*, const void*, std::size_t) override { no_transfer(); }
  [[noreturn]] void abort(const std::string& message, int) override { throw_runtime(message); }

 private:
  [[noreturn]] static void no_transfer() { throw_runtime("DeviceMemoryStub: no transfer expected"); }
};

TEST(PointToPointAlgorithms, RefuseDeviceMemoryWhateverTheCount) {
  // The check comes before anything else, so even a call with no elements names the problem.
  DeviceMemoryStub gpu;
  float buf[4] = {};
  for (const Named& a : every_algorithm()) {
    if (a.name == "library") continue;  // the communicator's own collective works in any memory
    auto algo = collectives::make_algorithm(a.collective, a.name);
    for (const std::size_t count : {std::size_t{0}, std::size_t{2}}) {
      try {
        algo->run(gpu, buf, buf, count, comm::DataType::f32, comm::ReduceOp::sum, 0);
        ADD_FAILURE() << a.name << " ran on device memory with count " << count;
      } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::usage) << a.name << ": " << e.what();
        EXPECT_EQ(e.parameter(), "algorithm") << e.what();
        EXPECT_NE(std::string(e.what()).find("use the library algorithm"), std::string::npos) << e.what();
      }
    }
  }
}

TEST(AlgorithmTable, UnknownNamesAreUsageErrorsListingTheValidOnes) {
  try {
    (void)collectives::make_algorithm(Collective::allreduce, "butterfly");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::usage);
    const std::string m = e.what();
    EXPECT_EQ(e.parameter(), "algorithm") << m;  // the CLI prints its flag in its place
    EXPECT_NE(m.find("butterfly"), std::string::npos) << m;
    EXPECT_NE(m.find("rabenseifner"), std::string::npos) << m;
  }
  EXPECT_EQ(collectives::parse_collective("reduce-scatter", "bench"), Collective::reduce_scatter);
  EXPECT_THROW((void)collectives::parse_collective("alltoall", "bench"), Error);
}

}  // namespace
}  // namespace scalelab::test
