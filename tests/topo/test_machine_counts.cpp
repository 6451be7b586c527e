// Whole counts in machine files (nodes, cores, a link's count and width): a fraction or a number
// beyond int is an input error naming the entry, not a cast to int with undefined behaviour.
#include <gtest/gtest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "topo/machine_file.h"

namespace scalelab::topo {
namespace {

nlohmann::json machine() {
  return nlohmann::json::parse(R"({
    "format": "scalelab-machine/1", "name": "pair", "nodes": 1,
    "devices": [{"id": "cpu0", "kind": "cpu", "cores": 8}, {"id": "gpu0", "kind": "gpu"}, {"id": "gpu1", "kind": "gpu"}],
    "links": [{"between": ["gpu0", "cpu0"], "type": "pcie", "gen": "3", "width": 16},
              {"between": ["gpu1", "cpu0"], "type": "pcie", "gen": "3", "width": 16},
              {"between": ["gpu0", "gpu1"], "type": "nvlink", "gen": "2", "count": 2}]
  })");
}

std::string error_of(const nlohmann::json& doc) {
  try {
    (void)parse_machine(doc, "m.json");
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), 2);
    return e.what();
  }
  return "";
}

TEST(MachineCounts, WholeCountsLoad) {
  EXPECT_EQ(error_of(machine()), "");
  EXPECT_EQ(parse_machine(machine(), "m.json").devices[0].cores, 8);
}

TEST(MachineCounts, FractionsAndNumbersBeyondIntAreNamed) {
  for (const double bad : {1e199, 2.5, 4294967296.0}) {
    auto m = machine();
    m["nodes"] = bad;
    EXPECT_EQ(error_of(m), "m.json: top level: \"nodes\" is " + nlohmann::json(bad).dump() + "; give a whole number from 1 to 16384");
    m = machine();
    m["devices"][0]["cores"] = bad;
    EXPECT_NE(error_of(m).find("m.json: devices[0] (cpu0): \"cores\" is " + nlohmann::json(bad).dump() + "; give a whole number from 1 to"),
              std::string::npos) << error_of(m);
    m = machine();
    m["links"][2]["count"] = bad;
    EXPECT_NE(error_of(m).find("\"count\" is " + nlohmann::json(bad).dump() + "; give a whole number"), std::string::npos);
    m = machine();
    m["links"][0]["width"] = bad;
    EXPECT_NE(error_of(m).find("\"width\" is " + nlohmann::json(bad).dump() + "; give a whole number"), std::string::npos);
  }
}

}  // namespace
}  // namespace scalelab::topo
