// Every algorithm of every collective against the reference (collective_check.h) over Open MPI,
// run by CTest at 2, 3 and 4 ranks, also with the backend's per-call chunk lowered. Failures are
// gathered so every rank agrees on the verdict; rank 0 prints them. Also: require_same names the
// ranks that disagree.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "collective_check.h"
#include "collectives/algorithm.h"
#include "collectives/choice.h"
#include "comm/backends/mpi_communicator.h"
#include "comm/consistency.h"
#include "comm/factory.h"
#include "comm/mpi_runtime.h"
#include "core/error.h"

namespace scalelab::test {
namespace {

using collectives::Collective;

comm::Communicator& world() {
  static auto comm = comm::make_communicator("mpi");
  return *comm;
}

TEST(MpiAlgorithms, EveryAlgorithmMatchesTheReference) {
  auto& comm = world();
  for (const Collective c :
       {Collective::allreduce, Collective::broadcast, Collective::allgather, Collective::reduce_scatter}) {
    for (const auto& name : collectives::algorithm_names(c)) {
      auto algo = collectives::make_algorithm(c, name);
      const auto failures = check_all_cases(comm, *algo);
      const double worst = comm.max_over_ranks(static_cast<double>(failures.size()));
      EXPECT_EQ(worst, 0.0) << collectives::name_of(c) << "/" << name << " at " << comm.size() << " ranks"
                            << (failures.empty() ? std::string(" (failures on another rank)") : ": " + failures.front());
    }
  }
}

TEST(MpiAlgorithms, EveryAlgorithmMatchesTheReferenceWhenMessagesGoInChunks) {
  // The mpi backend with its per-call chunk lowered to 1000 bytes: every message above that
  // (the ring's unequal blocks, Rabenseifner's halves ...) takes the chunked path.
  comm::MpiCommunicator chunked(1000);
  for (const Collective c :
       {Collective::allreduce, Collective::broadcast, Collective::allgather, Collective::reduce_scatter}) {
    for (const auto& name : collectives::algorithm_names(c)) {
      auto algo = collectives::make_algorithm(c, name);
      const auto failures = check_all_cases(chunked, *algo);
      const double worst = chunked.max_over_ranks(static_cast<double>(failures.size()));
      EXPECT_EQ(worst, 0.0) << collectives::name_of(c) << "/" << name << " at " << chunked.size() << " ranks"
                            << (failures.empty() ? std::string(" (failures on another rank)") : ": " + failures.front());
    }
  }
}

// The shared-memory allreduce across "nodes": the communicator cuts this host into nodes of one
// and of two ranks, so the hierarchical path (slices reduced on the node, then a ring between the
// nodes, then gathered on the node) runs against the reference as on a cluster.
TEST(MpiAlgorithms, SharedMemoryAllreduceMatchesTheReferenceAcrossNodes) {
  for (const int block : {1, 2}) {
    comm::MpiCommunicator nodes(comm::MpiCommunicator::kDefaultMaxCountPerCall, block);
    auto algo = collectives::make_algorithm(Collective::allreduce, "shm");
    if (nodes.size() % block != 0) {
      // Nodes of unequal size: one line that says so, on every rank, not a hang; and again on a
      // second call, which must not take the failed set-up for a good one.
      std::vector<float> x(10, 1.0f);
      for (int call = 1; call <= 2; ++call) {
        try {
          algo->run(nodes, x.data(), x.data(), x.size(), comm::DataType::f32, comm::ReduceOp::sum, 0);
          ADD_FAILURE() << "call " << call << ": no error with nodes of " << block << " ranks at " << nodes.size();
        } catch (const Error& e) {
          EXPECT_NE(std::string(e.what()).find("the same number of ranks on every node"), std::string::npos) << e.what();
        }
      }
      continue;
    }
    const auto failures = check_all_cases(nodes, *algo);
    const double worst = nodes.max_over_ranks(static_cast<double>(failures.size()));
    EXPECT_EQ(worst, 0.0) << "shm on nodes of " << block << " ranks at " << nodes.size() << " ranks"
                          << (failures.empty() ? std::string(" (failures on another rank)") : ": " + failures.front());
  }
}

// --algo auto where the nodes hold different numbers of ranks: the communicator says so and so does
// the query the chooser gets (the cost model then passes shm over: tests/model/test_predict.cpp).
TEST(MpiAlgorithms, TheChoiceKnowsWhetherEveryNodeHasAsManyRanks) {
  EXPECT_TRUE(world().uniform_nodes());
  for (const int block : {1, 2}) {
    comm::MpiCommunicator nodes(comm::MpiCommunicator::kDefaultMaxCountPerCall, block);
    const bool uniform = nodes.size() % block == 0;
    EXPECT_EQ(nodes.uniform_nodes(), uniform) << "nodes of " << block << " at " << nodes.size() << " ranks";
    const std::string got = collectives::choose_algorithm(
        nodes, collectives::ChoiceQuery{Collective::allreduce, 1e6},
        [](const collectives::ChoiceQuery& q) { return std::string(q.uniform_nodes ? "shm" : "ring"); });
    EXPECT_EQ(got, uniform ? "shm" : "ring");
  }
}

// Buffers in node memory: read in place on one node and across "nodes" (the hierarchical path),
// exact, with nothing staged.
TEST(MpiAlgorithms, SharedMemoryAllreduceReadsSharedBuffersInPlace) {
  for (const int block : {0, 1, 2}) {
    comm::MpiCommunicator nodes(comm::MpiCommunicator::kDefaultMaxCountPerCall, block);
    if (block > 0 && nodes.size() % block != 0) continue;
    auto algo = collectives::make_algorithm(Collective::allreduce, "shm");
    unsigned char* memory = nodes.shared_buffer(check_memory_bytes(nodes.size()));
    ASSERT_NE(memory, nullptr);
    const auto failures = check_all_cases(nodes, *algo, memory);
    const double worst = nodes.max_over_ranks(static_cast<double>(failures.size()));
    EXPECT_EQ(worst, 0.0) << "shm on shared buffers, nodes of " << block << " ranks at " << nodes.size() << " ranks"
                          << (failures.empty() ? std::string(" (failures on another rank)") : ": " + failures.front());
    EXPECT_EQ(nodes.max_over_ranks(static_cast<double>(algo->staged_bytes())), 0.0) << "a rank staged its input";
  }
}

TEST(MpiConsistency, RequireSameNamesTheRanksThatDisagree) {
  auto& comm = world();
  EXPECT_NO_THROW(comm::require_same(comm, 42, "--minbytes: ranks disagree on the element count"));
  const std::uint64_t mine = comm.rank() == 1 ? 524288 : 262144;
  try {
    comm::require_same(comm, mine, "--minbytes: ranks disagree on the element count");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::comm);
    const std::string m = e.what();
    EXPECT_NE(m.find("rank 0 has 262144, rank 1 has 524288"), std::string::npos) << m;
    EXPECT_NE(m.find("launch every rank with the same arguments"), std::string::npos) << m;
  }
}

TEST(MpiCommunicator, ReportsItsGeometry) {
  auto& comm = world();
  EXPECT_EQ(comm.backend(), "mpi");
  EXPECT_GE(comm.local_size(), 1);
  EXPECT_LT(comm.local_rank(), comm.local_size());
  EXPECT_EQ(comm.max_over_ranks(comm.rank()), comm.size() - 1.0);
}

}  // namespace
}  // namespace scalelab::test

int main(int argc, char** argv) {
  scalelab::comm::ensure_mpi_initialized();
  ::testing::InitGoogleTest(&argc, argv);
  int rank = scalelab::test::world().rank();
  if (rank != 0) {  // one report, from rank 0
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  const int rc = RUN_ALL_TESTS();
  // Every rank's verdict: a test that failed only on rank 2 must fail the run.
  const double worst = scalelab::test::world().max_over_ranks(rc);
  scalelab::comm::finalize_mpi();
  return worst != 0 ? 1 : 0;
}
