// Machine files: the catalog parses, and each kind of malformed file is refused with one line
// naming the file, the entry and the problem.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "topo/catalog.h"
#include "topo/machine_file.h"

namespace scalelab::topo {
namespace {

// A two-GPU machine we can break in one place per test.
nlohmann::json small_machine() {
  return nlohmann::json::parse(R"({
    "name": "pair",
    "devices": [{"id": "cpu0", "kind": "cpu", "generation": "skylake"},
                {"id": "gpu0", "kind": "gpu"}, {"id": "gpu1", "kind": "gpu"}],
    "switches": [{"id": "sw0", "kind": "pcie"}],
    "links": [{"between": ["gpu0", "sw0"], "type": "pcie", "gen": "3", "width": 16},
              {"between": ["gpu1", "sw0"], "type": "pcie", "gen": "3", "width": 16},
              {"between": ["sw0", "cpu0"], "type": "pcie", "gen": "3", "width": 16},
              {"between": ["gpu0", "gpu1"], "type": "nvlink", "gen": "2", "count": 2}]
  })");
}

// The message of the input error parsing `doc` raises.
std::string error_of(const nlohmann::json& doc) {
  try {
    (void)parse_machine(doc, "bad.json");
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), 2);
    return e.what();
  }
  ADD_FAILURE() << "no error";
  return {};
}

TEST(MachineFile, EveryCatalogMachineParsesAndHasGpus) {
  const auto entries = catalog();
  ASSERT_GE(entries.size(), 10u);
  for (const auto& e : entries) {
    const Machine m = resolve_machine(e.name);
    EXPECT_FALSE(m.gpus().empty()) << e.name;
    EXPECT_FALSE(m.sources.empty()) << e.name << " cites no source";
  }
}

TEST(MachineFile, SmallMachineParses) {
  const Machine m = parse_machine(small_machine(), "pair.json");
  EXPECT_EQ(m.gpus().size(), 2u);
  EXPECT_EQ(m.links.size(), 4u);
}

TEST(MachineFile, UnknownLinkTypeNamesFileEntryAndType) {
  auto doc = small_machine();
  doc["links"][3]["type"] = "nvlnk";
  const std::string msg = error_of(doc);
  EXPECT_NE(msg.find("bad.json"), std::string::npos) << msg;
  EXPECT_NE(msg.find("links[3] (gpu0-gpu1)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("unknown link type 'nvlnk'"), std::string::npos) << msg;
}

TEST(MachineFile, LinkToMissingDevice) {
  auto doc = small_machine();
  doc["links"][1]["between"][0] = "gpu9";
  const std::string msg = error_of(doc);
  EXPECT_NE(msg.find("links[1] (gpu9-sw0)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'gpu9' is not a device or switch"), std::string::npos) << msg;
}

TEST(MachineFile, GpuWithNoRoute) {
  auto doc = small_machine();
  doc["devices"].push_back({{"id", "gpu2"}, {"kind", "gpu"}});
  const std::string msg = error_of(doc);
  EXPECT_NE(msg.find("device 'gpu2' (GPU)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("no route"), std::string::npos) << msg;
}

TEST(MachineFile, NegativeBandwidth) {
  auto doc = small_machine();
  doc["links"][0]["bw_GBps"] = -5;
  const std::string msg = error_of(doc);
  EXPECT_NE(msg.find("links[0] (gpu0-sw0)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("-5"), std::string::npos) << msg;
  EXPECT_NE(msg.find("not positive"), std::string::npos) << msg;
}

TEST(MachineFile, UnknownGenerationListsTheKnownOnes) {
  auto doc = small_machine();
  doc["links"][3]["gen"] = "9";
  const std::string msg = error_of(doc);
  EXPECT_NE(msg.find("unknown generation '9' for nvlink; use one of 1, 2, 3, 4"), std::string::npos) << msg;
}

TEST(MachineFile, DuplicateIdAndNegativeDeviceFigure) {
  auto dup = small_machine();
  dup["devices"][2]["id"] = "gpu0";
  EXPECT_NE(error_of(dup).find("duplicate id 'gpu0'"), std::string::npos);
  auto neg = small_machine();
  neg["devices"][1]["mem_bw_GBps"] = -900;
  EXPECT_NE(error_of(neg).find("negative"), std::string::npos);
}

TEST(MachineFile, ErrorMessagesAreOneLine) {
  auto doc = small_machine();
  doc["links"][3]["type"] = "warp";
  EXPECT_EQ(error_of(doc).find('\n'), std::string::npos);
}

TEST(MachineFile, UnknownCatalogNameListsTheCatalog) {
  try {
    (void)resolve_machine("dgx9");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("dgx1"), std::string::npos);
  }
}

TEST(MachineFile, GpuSelection) {
  const Machine m = resolve_machine("superpod-a100");
  const auto all = select_gpus(m, "4096");
  EXPECT_EQ(all.nodes, 512);
  EXPECT_EQ(all.total, 4096);
  const auto two = select_gpus(m, "0,3");
  ASSERT_EQ(two.gpus.size(), 2u);
  EXPECT_EQ(m.devices[two.gpus[1]].id, "gpu3");
  EXPECT_THROW((void)select_gpus(m, "0,8"), Error);
  EXPECT_THROW((void)select_gpus(m, "12"), Error);  // not a multiple of 8 across nodes
  EXPECT_THROW((void)select_gpus(m, "0,0"), Error);
}

}  // namespace
}  // namespace scalelab::topo
