// The calibrated CPU costs read from a profile: whether the VM changed state, how cold a call's
// working set is (the measured working-set curve), and the take-back of lines the peer has read.
#include <gtest/gtest.h>

#include <cmath>
#include <exception>
#include <string>
#include <vector>

#include "model/profile.h"

#include <nlohmann/json.hpp>

namespace scalelab::model {
namespace {

Profile hot_and_cold_profile() {
  // Cold tables 3x the hot ones, so a cost tells how cold the call was taken to be.
  Profile p;
  for (double s : {8.0, 1e3, 1e6, 1e8}) {
    p.message_hot.bytes.push_back(s);
    p.message_hot.seconds.push_back(1e-6 + s / 6e9);
    p.message_cold.bytes.push_back(s);
    p.message_cold.seconds.push_back(3 * (1e-6 + s / 6e9));
    for (SizeTable* t : {&p.reduce_hot, &p.reduce_cold, &p.copy_hot, &p.copy_cold}) {
      t->bytes.push_back(s);
      t->seconds.push_back(s / 8e9);
    }
  }
  return p;
}

TEST(SameState, FlagRoundsWithin2xOfEachOtherAreOneStateAndUnmeasuredOnesAreNoEvidence) {
  EXPECT_TRUE(same_state(0.04e-6, 0.04e-6));
  EXPECT_TRUE(same_state(0.04e-6, 0.08e-6));   // exactly 2x
  EXPECT_TRUE(same_state(0.08e-6, 0.04e-6));
  EXPECT_FALSE(same_state(0.04e-6, 0.0801e-6));
  EXPECT_FALSE(same_state(0.24e-6, 0.04e-6));  // the VM's two states
  EXPECT_FALSE(same_state(0.04e-6, 0.24e-6));
  EXPECT_TRUE(same_state(0.0, 0.24e-6));       // not measured
  EXPECT_TRUE(same_state(0.24e-6, 0.0));
}

TEST(ColdFraction, ReadsTheMeasuredWorkingSetCurve) {
  Profile p = hot_and_cold_profile();
  // 20 us in cache up to 2 MiB, 60 us from memory from 16 MiB; a noisy dip at 8 MiB, which is
  // pooled with the point before it: 4 and 8 MiB both read (40 + 35) / 2 = 37.5 us.
  p.working_set.bytes = {1 << 19, 1 << 21, 1 << 22, 1 << 23, 1 << 24, 1 << 26};
  p.working_set.seconds = {20e-6, 20e-6, 40e-6, 35e-6, 60e-6, 60e-6};
  EXPECT_DOUBLE_EQ(cold_fraction(p, 1 << 18), 0.0);
  EXPECT_DOUBLE_EQ(cold_fraction(p, 1 << 21), 0.0);
  EXPECT_DOUBLE_EQ(cold_fraction(p, 1 << 22), 17.5 / 40);
  EXPECT_DOUBLE_EQ(cold_fraction(p, 1 << 23), 17.5 / 40);
  // Half-way (in log W) from 8 to 16 MiB: half-way from 37.5 to 60 us.
  EXPECT_NEAR(cold_fraction(p, std::sqrt(double(1 << 23) * double(1 << 24))), (48.75 - 20) / 40, 1e-12);
  EXPECT_DOUBLE_EQ(cold_fraction(p, 1 << 28), 1.0);
  // A small exchange (its own working set in cache) in a call of 4 MiB per rank: 17.5/40 of the
  // way from the hot table to the cold one, which is 3x the hot here.
  const double m = 1e5, hot = p.message_hot.at(m);
  EXPECT_NEAR(CpuCosts(p, 1 << 22).message(m), hot * (1 + 2 * 17.5 / 40), hot * 1e-9);
  EXPECT_NEAR(CpuCosts(p, 1 << 20).message(m), hot, hot * 1e-9);
  // A 4 MiB exchange was measured with 8 MiB of its own: in a call of 8 MiB it is what the hot
  // table says; in a call of 64 MiB (all the way cold) what the cold one says.
  const double big = 4.0 * (1 << 20);
  EXPECT_NEAR(CpuCosts(p, 1 << 23).message(big), p.message_hot.at(big), p.message_hot.at(big) * 1e-9);
  EXPECT_NEAR(CpuCosts(p, 1 << 26).message(big), p.message_cold.at(big), p.message_cold.at(big) * 1e-9);
}

TEST(Reclaim, TheTakeBackFadesAsThePeerWalksAway) {
  Profile p = hot_and_cold_profile();
  const double probe = kReclaimProbeBytes, m = 1e6;
  // No tables (older profiles): nothing.
  EXPECT_EQ(CpuCosts(p, m).reclaim(m, m), 0.0);
  // A copy into lines the peer read costs 3x the plain one in cache.
  for (double s : {probe, 1e6}) {
    p.copy_into_read.bytes.push_back(s);
    p.copy_into_read.seconds.push_back(3 * p.copy_hot.at(s));
  }
  const double base = 2 * p.copy_hot.at(probe), full = 2 * p.copy_hot.at(m);
  // After walks of 128 KiB .. 8 MiB the walked copies differ by all, half, a lone dip to 0.1
  // (a moment in another state: its neighbours' median, half, stands for it), half, a rise to
  // 0.8 (capped at the half before it: a longer walk brings nothing back), and a difference
  // below the plain copy (held at 0).
  const double w0 = 128.0 * 1024;
  const std::vector<double> share = {1, 0.5, 0.1, 0.5, 0.8, 0.8, -0.5};
  for (std::size_t k = 0; k < share.size(); ++k) {
    p.copy_into_read_walked.bytes.push_back(w0 * double(1 << k));
    p.copy_walked.bytes.push_back(w0 * double(1 << k));
    p.copy_walked.seconds.push_back(20e-6);
    p.copy_into_read_walked.seconds.push_back(20e-6 + share[k] * base);
  }
  const CpuCosts c(p, m);
  EXPECT_NEAR(c.reclaim(m, 0), full, full * 1e-9);
  EXPECT_NEAR(c.reclaim(m, w0 / 2), full, full * 1e-9);  // below the first walk: toward all of it
  EXPECT_NEAR(c.reclaim(m, w0), full, full * 1e-9);
  EXPECT_NEAR(c.reclaim(m, 2 * w0), full / 2, full * 1e-9);
  EXPECT_NEAR(c.reclaim(m, 4 * w0), full / 2, full * 1e-9);   // the dip
  EXPECT_NEAR(c.reclaim(m, 16 * w0), full / 2, full * 1e-9);  // the rise
  EXPECT_NEAR(c.reclaim(m, 32 * w0), full / 2, full * 1e-9);
  EXPECT_NEAR(c.reclaim(m, std::sqrt(32.0 * 64.0) * w0), full / 4, full * 1e-9);  // half-way in log W
  EXPECT_EQ(c.reclaim(m, 64 * w0), 0.0);
  EXPECT_EQ(c.reclaim(m, 1e9), 0.0);
  EXPECT_EQ(c.reclaim(0, 0), 0.0);
  // The tables travel with the profile, and walks that do not match are refused.
  const Profile back = profile_from_json(to_json(p), "new.json");
  EXPECT_EQ(back.copy_into_read_walked.bytes, p.copy_into_read_walked.bytes);
  EXPECT_NEAR(CpuCosts(back, m).reclaim(m, 2 * w0), full / 2, full * 1e-6);
  nlohmann::json j = to_json(p);
  j["copy_walked"].erase(0);
  try {
    (void)profile_from_json(j, "bad.json");
    ADD_FAILURE() << "walks that differ were accepted";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("bad.json: copy_walked and copy_into_read_walked"), std::string::npos) << e.what();
  }
}

TEST(ColdFraction, OlderProfilesFallBackToTheReportedCacheSize) {
  Profile p = hot_and_cold_profile();
  p.llc_bytes = 32.0 * (1 << 20);
  EXPECT_DOUBLE_EQ(cold_fraction(p, 16.0 * (1 << 20)), 0.0);
  EXPECT_NEAR(cold_fraction(p, 32.0 * (1 << 20)), 0.5, 1e-12);
  EXPECT_DOUBLE_EQ(cold_fraction(p, 64.0 * (1 << 20)), 1.0);
  // And a profile file without the table loads (schema_version 2 and older).
  nlohmann::json j = to_json(p);
  j.erase("working_set");
  EXPECT_TRUE(profile_from_json(j, "old.json").working_set.empty());
  p.working_set.bytes = {1 << 20, 1 << 24};
  p.working_set.seconds = {1e-5, 3e-5};
  EXPECT_EQ(profile_from_json(to_json(p), "new.json").working_set.seconds.size(), 2u);
}

}  // namespace
}  // namespace scalelab::model
