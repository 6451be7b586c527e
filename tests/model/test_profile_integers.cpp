// A calibration profile's integer fields (ranks, compute.threads, compute.batch): a fraction or a
// number beyond int is an input error naming the file and the field, not a conversion with
// undefined behaviour.
#include <gtest/gtest.h>

#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "model/profile.h"

using namespace scalelab;

namespace {

nlohmann::json profile_with(const std::string& key, const nlohmann::json& value, bool in_compute) {
  const nlohmann::json table = nlohmann::json::array({{{"bytes", 8}, {"us", 1.0}}, {{"bytes", 4096}, {"us", 3.0}}});
  nlohmann::json p{{"message_hot", table}, {"message_cold", table}, {"reduce_hot", table},
                   {"reduce_cold", table}, {"copy_hot", table},    {"copy_cold", table},
                   {"gpu", {{"measured", false}, {"reason", "none"}}}};
  p["compute"] = {{"measured", true},          {"threads", 1},         {"batch", 32},
                  {"conv_gflops_per_s", 50.0}, {"matmul_gflops_per_s", 80.0}, {"elementwise_GBps", 10.0},
                  {"pool_GBps", 8.0}};
  (in_compute ? p["compute"] : p)[key] = value;
  return {{"schema", "scalelab.calibration"}, {"schema_version", model::kProfileSchemaVersion}, {"profile", p}};
}

std::string error_of(const nlohmann::json& doc) {
  try {
    (void)model::profile_from_json(doc, "prof.json");
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::input);
    return e.what();
  }
  return "";
}

}  // namespace

TEST(ProfileIntegers, IntegersLoad) {
  EXPECT_EQ(error_of(profile_with("ranks", 2, false)), "");
  EXPECT_EQ(model::profile_from_json(profile_with("batch", 64, true), "prof.json").compute.batch, 64);
}

TEST(ProfileIntegers, FractionsAndNumbersBeyondIntAreInputErrorsNamingTheField) {
  for (const nlohmann::json& bad : {nlohmann::json(1e300), nlohmann::json(2.5), nlohmann::json(4294967296LL)}) {
    const std::string shown = "is " + fmt::format("{:g}", bad.get<double>()) + "; it must be a whole number up to 2147483647";
    EXPECT_EQ(error_of(profile_with("ranks", bad, false)), "prof.json: \"ranks\" " + shown + "; run 'scalelab calibrate' again") << bad;
    EXPECT_EQ(error_of(profile_with("threads", bad, true)),
              "prof.json: \"compute.threads\" " + shown + "; run 'scalelab calibrate' again") << bad;
    EXPECT_EQ(error_of(profile_with("batch", bad, true)),
              "prof.json: \"compute.batch\" " + shown + "; run 'scalelab calibrate' again") << bad;
  }
  EXPECT_EQ(error_of(profile_with("ranks", "2", false)), "prof.json: \"ranks\" is not a number; run 'scalelab calibrate' again");
}
