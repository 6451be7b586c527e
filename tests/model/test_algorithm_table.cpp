// Every algorithm of the table (collectives/algorithm.h) through the cost model: each has a
// formula (only `library` may lack one, being priced by the backend's model), and the Predictor
// gives a finite, positive time for it on CPU ranks and on GPUs within a node and across nodes.
// The executor side of the same walk (every algorithm against the reference sum, at 1-5 ranks)
// is tests/collectives/test_algorithms_local.cpp, which also iterates the table.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "collectives/algorithm.h"
#include "core/error.h"
#include "model/predict.h"
#include "model/profile.h"
#include "topo/catalog.h"

namespace scalelab::model {
namespace {

using collectives::AlgorithmDescriptor;

Profile constant_rate_profile() {
  Profile p;
  p.host = "test";
  for (double s : {8.0, 1e3, 1e6, 1e8}) {
    for (SizeTable* t : {&p.message_hot, &p.message_cold}) { t->bytes.push_back(s); t->seconds.push_back(1e-6 + s / 5e9); }
    for (SizeTable* t : {&p.reduce_hot, &p.reduce_cold}) { t->bytes.push_back(s); t->seconds.push_back(s / 8e9); }
    for (SizeTable* t : {&p.copy_hot, &p.copy_cold}) { t->bytes.push_back(s); t->seconds.push_back(s / 16e9); }
  }
  return p;
}

std::string label(const AlgorithmDescriptor& d) {
  return std::string(collectives::name_of(d.collective)) + " " + std::string(d.name);
}

TEST(AlgorithmCosts, EveryRowIsComplete) {
  ASSERT_FALSE(collectives::algorithm_table().empty());
  for (const AlgorithmDescriptor* d : collectives::algorithm_table()) {
    EXPECT_FALSE(d->name.empty());
    EXPECT_FALSE(d->summary.empty()) << label(*d);
    EXPECT_FALSE(d->analogue.empty()) << label(*d);
    ASSERT_NE(d->make, nullptr) << label(*d);
    EXPECT_EQ(d->make()->name(), d->name) << label(*d);
    EXPECT_EQ(d->make()->collective(), d->collective) << label(*d);
    EXPECT_EQ(d->is_library(), d->name == "library") << label(*d) << ": only library may have no cost formula";
    EXPECT_TRUE(d->max_segments == 0 || d->segment_bytes > 0) << label(*d) << ": a segment cap needs a segment size";
    EXPECT_EQ(&collectives::find_algorithm(d->collective, d->name), d) << label(*d) << " is listed twice";
  }
}

TEST(AlgorithmCosts, EveryFormulaGrowsWithTheBufferAndVanishesAtOneRank) {
  const collectives::AlphaBeta costs(5e-6, 1.0 / 10e9, 1.0 / 20e9);
  for (const AlgorithmDescriptor* d : collectives::algorithm_table()) {
    if (d->is_library()) continue;
    for (int p : {2, 3, 8, 13}) {
      const double small = d->cost(1e3, p, costs), large = d->cost(1e8, p, costs);
      EXPECT_TRUE(std::isfinite(small) && small > 0) << label(*d) << " p=" << p;
      EXPECT_GT(large, small) << label(*d) << " p=" << p;
    }
    EXPECT_EQ(d->cost(1e6, 1, costs), 0.0) << label(*d);
    EXPECT_EQ(d->cost(0, 4, costs), 0.0) << label(*d);
  }
}

void expect_finite_for_every_algorithm(const Predictor& pr, const std::string& where) {
  for (const AlgorithmDescriptor* d : collectives::algorithm_table()) {
    for (double bytes : {8.0, 65536.0, 64e6}) {
      if (d->host_only && pr.on_gpus()) {
        // Not priced on GPUs: a usage error that says why, rather than a number.
        try {
          (void)pr.predict(d->collective, std::string(d->name), std::nullopt, bytes);
          ADD_FAILURE() << label(*d) << " was priced on " << where;
        } catch (const Error& e) {
          EXPECT_EQ(e.kind(), ErrorKind::usage) << e.what();
          EXPECT_NE(std::string(e.what()).find("CPU ranks only"), std::string::npos) << e.what();
        }
        continue;
      }
      const Prediction x = pr.predict(d->collective, std::string(d->name), std::nullopt, bytes);
      EXPECT_TRUE(std::isfinite(x.time_s) && x.time_s > 0)
          << label(*d) << " on " << where << " at " << bytes << " B: " << x.time_s << " (" << x.detail << ")";
    }
  }
}

TEST(AlgorithmCosts, EveryAlgorithmIsPredictedOnCpuRanks) {
  for (int ranks : {2, 3, 4}) {
    expect_finite_for_every_algorithm(Predictor(constant_rate_profile(), ranks), std::to_string(ranks) + " CPU ranks");
  }
}

TEST(AlgorithmCosts, EveryAlgorithmIsPredictedOnGpusInANodeAndAcrossNodes) {
  for (const auto& [machine, gpus] : {std::pair{"dgx1", "8"}, std::pair{"dgx-h100", "8"}, std::pair{"puhti", "8"}}) {
    const auto m = topo::resolve_machine(machine);
    expect_finite_for_every_algorithm(Predictor(m, topo::select_gpus(m, gpus), topo::P2P::on),
                                      std::string(machine) + " x " + gpus);
  }
}

}  // namespace
}  // namespace scalelab::model
