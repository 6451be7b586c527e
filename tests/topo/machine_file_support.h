// Helpers of the machine-file tests (test_machine_file.cpp, test_machine_links.cpp): a small
// machine to break in one place per test, and the one-line error parsing a document raises.
#pragma once
#include <gtest/gtest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "topo/catalog.h"
#include "topo/machine_file.h"

namespace scalelab::topo {

// A two-GPU machine we can break in one place per test.
inline nlohmann::json small_machine() {
  return nlohmann::json::parse(R"({
    "format": "scalelab-machine/2",
    "name": "pair",
    "devices": [{"id": "cpu0", "kind": "cpu", "generation": "skylake"},
                {"id": "gpu0", "kind": "gpu", "arch": "volta"}, {"id": "gpu1", "kind": "gpu", "arch": "volta"}],
    "switches": [{"id": "sw0", "kind": "pcie"}],
    "links": [{"between": ["gpu0", "sw0"], "type": "pcie", "gen": "3", "width": 16},
              {"between": ["gpu1", "sw0"], "type": "pcie", "gen": "3", "width": 16},
              {"between": ["sw0", "cpu0"], "type": "pcie", "gen": "3", "width": 16},
              {"between": ["gpu0", "gpu1"], "type": "nvlink", "gen": "2", "count": 2}]
  })");
}

// The message of the input error parsing `doc` raises.
inline std::string error_of(const nlohmann::json& doc) {
  try {
    (void)parse_machine(doc, "bad.json");
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), 2);
    return e.what();
  }
  ADD_FAILURE() << "no error";
  return {};
}

}  // namespace scalelab::topo
