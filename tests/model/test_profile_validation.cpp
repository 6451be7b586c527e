// A calibration profile is checked field by field when it loads: each damaged field of a valid
// profile (empty or unsorted tables, out-of-range counts and sizes, another schema or version) is
// an input error naming the file and the field.
#include <gtest/gtest.h>
#include <unistd.h>

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/limits.h"
#include "core/results.h"
#include "model/profile.h"

namespace scalelab::model {
namespace {

SizeTable line(double us_per_byte) {
  SizeTable t;
  for (double b = 8; b <= 64.0 * (1 << 20); b *= 8) {
    t.bytes.push_back(b);
    t.seconds.push_back(1e-6 + b * us_per_byte * 1e-6);
  }
  return t;
}

// A profile as `scalelab calibrate` saves it: envelope, then the profile under "profile".
nlohmann::json saved_profile() {
  Profile p;
  p.message_hot = p.message_cold = line(1e-4);
  p.reduce_hot = p.reduce_cold = line(2e-4);
  p.copy_hot = p.copy_cold = line(1e-4);
  p.working_set = line(1e-5);
  p.peer_copy = line(3e-4);
  p.exchange_reduce_hot = p.exchange_reduce_cold = line(4e-4);
  p.shm_sync_s = 0.24e-6;
  p.shm_sync_start_s = 0.04e-6;
  p.gpu.measured = true;
  p.gpu.large_bytes = 1 << 26;
  p.gpu.small_bytes = 8;
  p.gpu.h2d_GBps = p.gpu.d2h_GBps = 25;
  p.gpu.d2d_GBps = 1500;
  p.compute.measured = true;
  p.compute.conv_flops_per_s = p.compute.matmul_flops_per_s = 1e11;
  p.compute.elementwise_bytes_per_s = p.compute.pool_bytes_per_s = 1e10;
  nlohmann::json doc = make_envelope("calibration", kProfileSchemaVersion, {"scalelab", "calibrate"});
  doc["profile"] = to_json(p);
  return doc;
}

struct Damage {
  std::string what;                                   // the change, for the failure message
  std::function<void(nlohmann::json&)> apply;         // on the whole document
  std::vector<std::string> words;                     // the error must contain each
};

}  // namespace

TEST(ProfileValidation, AnUndamagedProfileLoads) {
  const Profile p = profile_from_json(saved_profile(), "p.json");
  EXPECT_EQ(p.message_hot.bytes.size(), line(1).bytes.size());
  ASSERT_EQ(p.peer_copy.bytes, line(3e-4).bytes);
  EXPECT_NEAR(p.peer_copy.seconds.back(), line(3e-4).seconds.back(), 1e-15);
  ASSERT_EQ(p.exchange_reduce_cold.bytes, line(4e-4).bytes);
  EXPECT_NEAR(p.exchange_reduce_hot.seconds.back(), line(4e-4).seconds.back(), 1e-15);
  EXPECT_NEAR(p.shm_sync_s, 0.24e-6, 1e-15);
  EXPECT_NEAR(p.shm_sync_start_s, 0.04e-6, 1e-15);
  EXPECT_TRUE(p.gpu.measured);
  EXPECT_TRUE(p.compute.measured);
}

TEST(ProfileValidation, EachDamagedFieldIsAnInputErrorNamingTheFileAndTheField) {
  const std::vector<Damage> damages = {
      {"empty table", [](auto& d) { d["profile"]["message_hot"] = nlohmann::json::array(); }, {"message_hot", "no measurements"}},
      {"one-row table",
       [](auto& d) { d["profile"]["message_cold"] = nlohmann::json::array({{{"bytes", 1024}, {"us", 1.0}}}); },
       {"message_cold", "one measurement", "two sizes"}},
      {"misspelt field", [](auto& d) { d["profile"]["staged_hott"] = d["profile"]["staged_hot"]; }, {"staged_hott", "not a field"}},
      {"unsorted table",
       [](auto& d) { std::swap(d["profile"]["reduce_cold"][1], d["profile"]["reduce_cold"][3]); },
       {"reduce_cold[2].bytes", "ascending"}},
      {"repeated size",
       [](auto& d) { d["profile"]["copy_hot"][2]["bytes"] = d["profile"]["copy_hot"][1]["bytes"]; },
       {"copy_hot[2].bytes", "ascending"}},
      {"zero time", [](auto& d) { d["profile"]["copy_cold"][0]["us"] = 0; }, {"copy_cold[0].us", "at least 1e-06"}},
      {"time beyond any machine", [](auto& d) { d["profile"]["copy_cold"][0]["us"] = 1e300; }, {"copy_cold[0].us", "beyond any machine"}},
      {"rate beyond any machine", [](auto& d) { d["profile"]["compute"]["conv_gflops_per_s"] = 1e308; },
       {"compute.conv_gflops_per_s", "beyond any machine"}},
      {"text for a number", [](auto& d) { d["profile"]["message_cold"][1]["us"] = "fast"; }, {"message_cold[1].us", "not a number"}},
      {"table not an array", [](auto& d) { d["profile"]["copy_hot"] = 5; }, {"copy_hot", "not an array"}},
      {"missing table", [](auto& d) { d["profile"].erase("reduce_hot"); }, {"reduce_hot", "missing"}},
      {"unsorted working set",
       [](auto& d) { std::swap(d["profile"]["working_set"][0], d["profile"]["working_set"][4]); },
       {"working_set[1].bytes", "ascending"}},
      {"unsorted peer copies",
       [](auto& d) { std::swap(d["profile"]["peer_copy"][0], d["profile"]["peer_copy"][2]); },
       {"peer_copy[1].bytes", "ascending"}},
      {"unsorted exchange-and-reduce steps",
       [](auto& d) { std::swap(d["profile"]["exchange_reduce_hot"][0], d["profile"]["exchange_reduce_hot"][2]); },
       {"exchange_reduce_hot[1].bytes", "ascending"}},
      {"negative start flag round", [](auto& d) { d["profile"]["shm_sync_start_us"] = -1; }, {"shm_sync_start_us"}},
      {"another schema", [](auto& d) { d["schema"] = "scalelab.bench"; }, {"schema", "scalelab.calibration"}},
      {"no schema", [](auto& d) { d.erase("schema"); }, {"schema", "missing"}},
      {"future version", [](auto& d) { d["schema_version"] = kProfileSchemaVersion + 1; }, {"schema_version", "versions 1 to"}},
      {"version 0", [](auto& d) { d["schema_version"] = 0; }, {"schema_version", "versions 1 to"}},
      {"version as text", [](auto& d) { d["schema_version"] = "4"; }, {"schema_version"}},
      {"ranks 0", [](auto& d) { d["profile"]["ranks"] = 0; }, {"ranks", "at least 2"}},
      {"ranks fractional", [](auto& d) { d["profile"]["ranks"] = 2.5; }, {"ranks", "whole number"}},
      {"negative llc", [](auto& d) { d["profile"]["llc_bytes"] = -5; }, {"llc_bytes", "above 0"}},
      {"zero l2", [](auto& d) { d["profile"]["l2_bytes"] = 0; }, {"l2_bytes", "above 0"}},
      {"negative page fault", [](auto& d) { d["profile"]["page_fault_us"] = -1; }, {"page_fault_us", "at least 0"}},
      {"negative mmap threshold", [](auto& d) { d["profile"]["mmap_threshold_bytes"] = -1; }, {"mmap_threshold_bytes"}},
      {"negative fresh alloc", [](auto& d) { d["profile"]["fresh_alloc_ns_per_byte"] = -1; }, {"fresh_alloc_ns_per_byte"}},
      {"gpu zero bandwidth", [](auto& d) { d["profile"]["gpu"]["d2d_GBps"] = 0; }, {"gpu.d2d_GBps", "above 0"}},
      {"gpu negative latency", [](auto& d) { d["profile"]["gpu"]["h2d_latency_us"] = -3; }, {"gpu.h2d_latency_us"}},
      {"gpu zero size", [](auto& d) { d["profile"]["gpu"]["large_bytes"] = 0; }, {"gpu.large_bytes"}},
      {"compute zero threads", [](auto& d) { d["profile"]["compute"]["threads"] = 0; }, {"compute.threads", "at least 1"}},
      {"compute negative batch", [](auto& d) { d["profile"]["compute"]["batch"] = -1; }, {"compute.batch"}},
      {"compute zero rate", [](auto& d) { d["profile"]["compute"]["pool_GBps"] = 0; }, {"compute.pool_GBps", "above 0"}},
      {"shape of another kind",
       [](auto& d) { d["profile"]["compute"]["shapes"] = {{{"kind", "attention"}, {"m", 1}, {"n", 1}, {"k", 1}, {"gflops_per_s", 1}}}; },
       {"compute.shapes[0].kind", "not one of \"conv\", \"matmul\""}},
      {"shape of no size",
       [](auto& d) { d["profile"]["compute"]["shapes"] = {{{"kind", "conv"}, {"m", 0}, {"n", 1}, {"k", 1}, {"gflops_per_s", 1}}}; },
       {"compute.shapes[0].m", "above 0"}},
      {"traffic rate beyond any machine",
       [](auto& d) { d["profile"]["compute"]["traffic"] = {{{"kind", "norm"}, {"bytes", 1e6}, {"GBps", 1e300}}}; },
       {"compute.traffic[0].GBps", "beyond any machine"}},
      {"fused run without layers",
       [](auto& d) { d["profile"]["compute"]["fused"] = {{{"layers", nlohmann::json::array()}, {"batch", 32}, {"ms_per_image", 0.3}}}; },
       {"compute.fused[0].layers", "non-empty array"}},
      {"fused run at no batch",
       [](auto& d) {
         d["profile"]["compute"]["fused"] = {{{"layers", {{{"kind", "conv"}, {"forward_flops", 1}, {"params", 1}, {"in_elems", 1}, {"out_elems", 1}}}}, {"batch", 0}, {"ms_per_image", 0.3}}};
       },
       {"compute.fused[0].batch", "above 0"}},
      {"fused layer of no kind",
       [](auto& d) {
         d["profile"]["compute"]["fused"] = {{{"layers", {{{"kind", "attention"}, {"forward_flops", 1}, {"params", 1}, {"in_elems", 1}, {"out_elems", 1}}}}, {"batch", 32}, {"ms_per_image", 0.3}}};
       },
       {"compute.fused[0].layers[0].kind"}},
      {"traffic of a compute kind",
       [](auto& d) { d["profile"]["compute"]["traffic"] = {{{"kind", "conv"}, {"bytes", 1e6}, {"GBps", 10}}}; },
       {"compute.traffic[0].kind"}},
      {"negative norm rate", [](auto& d) { d["profile"]["compute"]["norm_GBps"] = -1; }, {"compute.norm_GBps"}},
  };
  for (const Damage& dmg : damages) {
    nlohmann::json doc = saved_profile();
    dmg.apply(doc);
    try {
      (void)profile_from_json(doc, "p.json");
      ADD_FAILURE() << dmg.what << ": accepted";
    } catch (const Error& e) {
      const std::string m = e.what();
      EXPECT_EQ(e.kind(), ErrorKind::input) << dmg.what << ": " << m;
      EXPECT_EQ(m.rfind("p.json: ", 0), 0u) << dmg.what << ": " << m;
      for (const auto& w : dmg.words) EXPECT_NE(m.find(w), std::string::npos) << dmg.what << ": " << m << " lacks " << w;
    }
  }
}

// Predictions from a profile say when it may describe something else: another host's profile,
// or more ranks than this machine has hardware threads.
TEST(ProfileCautions, AnotherHostAndMoreRanksThanThreadsAreNamed) {
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  Profile p;
  p.host = host;
  EXPECT_TRUE(profile_cautions(p, 1).empty());
  p.host = "gpu-node-17";
  const auto other = profile_cautions(p, 1);
  ASSERT_EQ(other.size(), 1u);
  EXPECT_NE(other[0].find("measured on gpu-node-17, not on this machine"), std::string::npos) << other[0];
  p.host = host;
  const int too_many = limits::hardware_threads() + 1;
  const auto crowded = profile_cautions(p, too_many);
  ASSERT_EQ(crowded.size(), 1u);
  EXPECT_NE(crowded[0].find(std::to_string(too_many) + " ranks on this machine's"), std::string::npos) << crowded[0];
}

}  // namespace scalelab::model
