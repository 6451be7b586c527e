// The cost formulas reduce to the textbook alpha-beta-gamma expressions (Thakur, Rabenseifner,
// Gropp 2005) when the costs are plain alpha-beta and nothing is segmented. Expected values are
// computed here from those expressions.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "collectives/cost_formulas.h"
#include "model/nccl.h"
#include "model/openmpi.h"

namespace scalelab::model {
namespace {

using namespace collectives;  // the cost formulas, AlphaBeta

constexpr double a = 2e-6, b = 1.0 / 10e9, g = 1.0 / 20e9;
const AlphaBeta kCosts(a, b, g);

TEST(Formulas, RingAllreduce) {
  for (int p : {2, 3, 8, 64}) {
    const double n = 64e6;
    const double expected = 2 * (p - 1) * a + 2 * n * (p - 1) / p * b + n * (p - 1) / p * g;
    EXPECT_NEAR(ring_allreduce(n, p, kCosts), expected, expected * 1e-12) << p;
  }
}

TEST(Formulas, RingSegmentsAddOnlyLatency) {
  const double n = 8e6, seg = 256e3;
  const int p = 4;
  const double pieces = std::ceil(n / p / seg);
  const double extra = (p - 1) * (pieces - 1) * a;
  EXPECT_NEAR(ring_allreduce(n, p, kCosts, seg) - ring_allreduce(n, p, kCosts), extra, 1e-15);
}

TEST(Formulas, RecursiveDoublingPowerOfTwo) {
  for (int p : {2, 4, 16}) {
    const double n = 1e6, lg = std::log2(p);
    EXPECT_NEAR(recursive_doubling_allreduce(n, p, kCosts), lg * (a + n * b + n * g), 1e-15) << p;
  }
}

TEST(Formulas, RabenseifnerPowerOfTwo) {
  for (int p : {2, 8, 32}) {
    const double n = 32e6, lg = std::log2(p);
    const double expected = 2 * lg * a + 2 * n * (p - 1) / p * b + n * (p - 1) / p * g;
    EXPECT_NEAR(rabenseifner_allreduce(n, p, kCosts), expected, expected * 1e-12) << p;
  }
}

TEST(Formulas, NonPowerOfTwoPaysTheFoldStep) {
  const double n = 1e6;
  EXPECT_NEAR(recursive_doubling_allreduce(n, 3, kCosts) - recursive_doubling_allreduce(n, 2, kCosts),
              2 * (a + n * b) + n * g, 1e-15);
}

TEST(Formulas, NaiveIsTheParameterServer) {
  const double n = 1e6;
  const int p = 5;
  EXPECT_NEAR(naive_allreduce(n, p, kCosts), 2 * (p - 1) * (a + n * b) + (p - 1) * n * g, 1e-15);
}

TEST(Formulas, TreeOfTwoIsOneRoundTrip) {
  const double n = 1e6;
  EXPECT_NEAR(tree_allreduce(n, 2, kCosts), 2 * (a + n * b) + n * g, 1e-15);
  // Seven ranks: a full binary tree of depth 2; the root takes its children one after the other.
  EXPECT_GT(tree_allreduce(n, 7, kCosts), 2 * 2 * (a + n * b));
}

TEST(Formulas, CollectivesOfOneRankCostNothing) {
  EXPECT_EQ(ring_allreduce(1e6, 1, kCosts), 0.0);
  EXPECT_EQ(rabenseifner_allreduce(0, 4, kCosts), 0.0);
}

TEST(Formulas, BusBandwidthFactors) {
  using collectives::Collective;
  EXPECT_DOUBLE_EQ(busbw_factor(Collective::allreduce, 8), 2.0 * 7 / 8);
  EXPECT_DOUBLE_EQ(busbw_factor(Collective::allgather, 4), 3.0 / 4);
  EXPECT_DOUBLE_EQ(busbw_factor(Collective::broadcast, 4), 1.0);
  EXPECT_DOUBLE_EQ(bus_factor(Collective::allreduce, 8), busbw_factor(Collective::allreduce, 8));
  EXPECT_DOUBLE_EQ(bus_factor(Collective::allreduce, 1), 1.0);  // no division by zero in the model
}

TEST(OpenMpi, TwoRankDecisionFollowsTheTunedTable) {
  EXPECT_EQ(openmpi_allreduce_choice(1024, 2), OmpiAllreduce::recursive_doubling);
  EXPECT_EQ(openmpi_allreduce_choice(64 * 1024, 2), OmpiAllreduce::segmented_ring);
  EXPECT_EQ(openmpi_allreduce_choice(256 * 1024, 2), OmpiAllreduce::rabenseifner);
  EXPECT_EQ(openmpi_allreduce_choice(64 << 20, 2), OmpiAllreduce::rabenseifner);
}

TEST(Formulas, BinomialBroadcastSendsWholeMessagesInCeilLog2pRounds) {
  const double n = 1e6;
  for (int p = 2; p <= 9; ++p) {
    const double rounds = std::ceil(std::log2(static_cast<double>(p)));
    EXPECT_NEAR(binomial_broadcast(n, p, kCosts), rounds * (a + n * b), 1e-15) << p;
  }
}

TEST(Formulas, RecursiveDoublingAllgatherDoublesItsMessageEveryRound) {
  const double n = 8e6;
  EXPECT_NEAR(recursive_doubling_allgather(n, 4, kCosts), (a + n / 4 * b) + (a + n / 2 * b), 1e-15);
  EXPECT_NEAR(recursive_doubling_allgather(n, 8, kCosts), (a + n / 8 * b) + (a + n / 4 * b) + (a + n / 2 * b), 1e-15);
}

// Costs whose temporaries are fresh pages above 32 MiB, at 1 ns per touched byte.
class FreshAbove final : public Costs {
 public:
  [[nodiscard]] double message(double m) const override { return kCosts.message(m); }
  [[nodiscard]] double reduce(double m) const override { return kCosts.reduce(m); }
  [[nodiscard]] double copy(double m) const override { return m * 1e-10; }
  [[nodiscard]] double fresh(double alloc, double touched) const override { return alloc >= 32e6 ? touched * 1e-9 : 0.0; }
};

TEST(OpenMpi, LargeAllreducePaysForItsFreshTemporary) {
  const FreshAbove c;
  const double n = 64e6;
  // Rabenseifner at 2 ranks: copy in, half the n-byte temporary touched, then the algorithm.
  const double expected = c.copy(n) + (n / 2) * 1e-9 + rabenseifner_allreduce(n, 2, c);
  EXPECT_NEAR(openmpi_allreduce(n, 2, c), expected, 1e-12);
  EXPECT_NEAR(openmpi_allreduce(n, 2, c, /*in_place=*/true), expected - c.copy(n), 1e-12);
  const double small = 16e6;
  EXPECT_NEAR(openmpi_allreduce(small, 2, c), c.copy(small) + rabenseifner_allreduce(small, 2, c), 1e-12);
}

// Costs whose take-back of lines the peer read is 1 ns per byte, remembering the walks asked about.
class Reclaims final : public Costs {
 public:
  [[nodiscard]] double message(double m) const override { return kCosts.message(m); }
  [[nodiscard]] double reduce(double m) const override { return kCosts.reduce(m); }
  [[nodiscard]] double copy(double m) const override { return m * 1e-10; }
  [[nodiscard]] double reclaim(double m, double since) const override {
    walks.push_back(since);
    return m * 1e-9;
  }
  mutable std::vector<double> walks;
};

TEST(OpenMpi, RingAndRabenseifnerTakeBackWhatTheirPeersRead) {
  // The ring at 2 ranks (64 KiB: segmented ring): its allgather receives one block into the block
  // the reduce-scatter sent, and out of place the copy-in writes the block the previous call's
  // allgather sent; the rest was already taken back. n bytes in all out of place, n/2 in place.
  const Reclaims c;
  const double ring_n = 64 * 1024;
  ASSERT_EQ(openmpi_allreduce_choice(ring_n, 2), OmpiAllreduce::segmented_ring);
  const double ring_plain = ring_n * 1e-10 + ring_allreduce(ring_n, 2, c);
  EXPECT_NEAR(openmpi_allreduce(ring_n, 2, c), ring_plain + ring_n * 1e-9, 1e-15);
  EXPECT_NEAR(openmpi_allreduce(ring_n, 2, c, /*in_place=*/true), ring_plain - ring_n * 1e-10 + ring_n / 2 * 1e-9, 1e-15);
  // Each priced after the peer has worked through the call's own bytes.
  for (double w : c.walks) EXPECT_DOUBLE_EQ(w, ring_n);
  // Rabenseifner at 4 ranks: the doubling steps receive n/2 and n/4 into what their mirrors sent;
  // the copy-in writes the half the last one sent.
  c.walks.clear();
  const double n = 1e6;
  ASSERT_EQ(openmpi_allreduce_choice(n, 4), OmpiAllreduce::rabenseifner);
  const double with = openmpi_allreduce(n, 4, c), in_place = openmpi_allreduce(n, 4, c, /*in_place=*/true);
  EXPECT_NEAR(with - in_place, n * 1e-10 + n / 2 * 1e-9, 1e-15);
  EXPECT_NEAR(in_place - rabenseifner_allreduce(n, 4, c), (n / 2 + n / 4) * 1e-9, 1e-15);
  for (double w : c.walks) EXPECT_DOUBLE_EQ(w, n);
  // Recursive doubling sends from a temporary: nothing to take back.
  ASSERT_EQ(openmpi_allreduce_choice(1024, 2), OmpiAllreduce::recursive_doubling);
  EXPECT_NEAR(openmpi_allreduce(1024, 2, c), 1024 * 1e-10 + recursive_doubling_allreduce(1024, 2, c), 1e-15);
}

// Costs whose measured reduce-scatter step (1 ms flat) is dearer than its parts.
class DearStep final : public Costs {
 public:
  [[nodiscard]] double message(double m) const override { return kCosts.message(m); }
  [[nodiscard]] double reduce(double m) const override { return kCosts.reduce(m); }
  [[nodiscard]] double copy(double m) const override { return m * 1e-10; }
  [[nodiscard]] double exchange_reduce(double) const override { return 1e-3; }
};

TEST(OpenMpi, AReduceScatterStepIntoItsOwnOutputIsPricedAsItsParts) {
  // Out of place, Open MPI copies the input into the output and reduces into lines it has just
  // written; in place, the caller has just written them: an exchange plus a reduction either way,
  // not the measured step (whose output the peer holds).
  const DearStep c;
  const double n = 1e6, half = n / 2;
  const double parts = c.message(half) + c.reduce(half);
  ASSERT_LT(parts, 1e-3);
  EXPECT_NEAR(openmpi_allreduce(n, 2, c), c.copy(n) + parts + c.message(half), 1e-12);
  EXPECT_NEAR(openmpi_allreduce(n, 2, c, /*in_place=*/true), parts + c.message(half), 1e-12);
  // The textbook formulas themselves take the measured step: ring and Rabenseifner at 2 ranks
  // (one step each), recursive doubling from 4 ranks (at 2 its peer reads only the input).
  EXPECT_NEAR(ring_allreduce(n, 2, c), 1e-3 + c.message(half), 1e-12);
  EXPECT_NEAR(rabenseifner_allreduce(n, 2, c), 1e-3 + c.message(half), 1e-12);
  EXPECT_NEAR(recursive_doubling_allreduce(n, 2, c), c.message(n) + c.reduce(n), 1e-12);
  EXPECT_NEAR(recursive_doubling_allreduce(n, 4, c), 2 * 1e-3, 1e-12);
}

}  // namespace
}  // namespace scalelab::model
