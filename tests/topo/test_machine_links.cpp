// Machine files: the links and routes a machine can have. A duplicated link, a link whose ends its
// type cannot join, an odd PCIe width, a switch joined to nothing, a machine without a CPU and a
// device with no route to one are each refused with one line naming the file and the entry.
#include <gtest/gtest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "machine_file_support.h"
#include "topo/catalog.h"
#include "topo/machine_file.h"
#include "topo/routes.h"

namespace scalelab::topo {
namespace {

// A catalog machine as a file again: to_json with the figures it adds taken out, and the count
// or width its link type does not read (to_json reports both).
nlohmann::json catalog_file(const std::string& name) {
  nlohmann::json doc = to_json(resolve_machine(name));
  doc.erase("origin");
  doc["format"] = "scalelab-machine/2";
  for (auto& l : doc["links"]) {
    l.erase("peak_GBps");
    l.erase("model_GBps");
    const std::string type = l["type"];
    if (type != "pcie") l.erase("width");
    if (type == "pcie" || type == "qpi" || type == "upi" || type == "amd-fabric") l.erase("count");
  }
  return doc;
}

// A link listed twice between the same two ends with the same type (in either order) was summed
// for some types and ignored for others: puhti's gpu0-gpu1 NVLink listed twice doubled predict's
// bandwidth. It is refused, naming both entries; another type between the same ends is not a duplicate.
TEST(MachineFile, DuplicateLinkIsRefused) {
  auto puhti = catalog_file("puhti");
  (void)parse_machine(puhti, "puhti.json");
  std::size_t first = 0;
  while (first < puhti["links"].size() && puhti["links"][first]["between"] != nlohmann::json{"gpu0", "gpu1"}) ++first;
  ASSERT_LT(first, puhti["links"].size());
  auto twice = puhti["links"][first];
  twice["between"] = {"gpu1", "gpu0"};
  puhti["links"].push_back(twice);
  const std::string last = std::to_string(puhti["links"].size() - 1);
  EXPECT_EQ(error_of(puhti), "bad.json: links[" + last + "] (gpu1-gpu0): a second nvlink link between gpu1 and gpu0 (links[" +
                                 std::to_string(first) + "] is the first); give one entry with its count");

  auto pcie = small_machine();
  pcie["links"].push_back(pcie["links"][0]);
  EXPECT_EQ(error_of(pcie), "bad.json: links[4] (gpu0-sw0): a second pcie link between gpu0 and sw0 (links[0] is the first); "
                            "give one entry with its width");
  // NVLink and xGMI between one pair are two types: not a duplicate (the type is part of the key).
  auto two_types = small_machine();
  two_types["links"].push_back({{"between", {"gpu1", "gpu0"}}, {"type", "xgmi"}, {"gen", "2"}});
  EXPECT_EQ(parse_machine(two_types, "ok.json").links.size(), 5u);
}

// A count on a PCIe link, a width on an NVLink, either on a socket link: fields the link's type
// does not read were ignored without a word; each is refused, naming the entry.
TEST(MachineFile, AFieldTheLinkTypeDoesNotReadIsRefused) {
  auto doc = small_machine();
  doc["links"][0]["count"] = 4;
  EXPECT_EQ(error_of(doc), "bad.json: links[0] (gpu0-sw0): \"count\" does not apply to a pcie link; give its \"width\" in lanes");
  doc = small_machine();
  doc["links"][3]["width"] = 8;
  EXPECT_EQ(error_of(doc), "bad.json: links[3] (gpu0-gpu1): \"width\" applies to PCIe links only; give the number of links "
                           "or ports as \"count\"");
  doc = small_machine();
  doc["devices"].push_back({{"id", "cpu1"}, {"kind", "cpu"}, {"generation", "skylake"}});
  doc["links"].push_back({{"between", {"cpu0", "cpu1"}}, {"type", "upi"}, {"gen", "skylake"}, {"count", 2}});
  EXPECT_NE(error_of(doc).find("\"count\" does not apply to a upi link; remove it"), std::string::npos);
}

// The host's CPU is needed (routes to host memory, CPU affinity): a machine without one is refused.
// A CPU-only machine (no GPU) still parses.
TEST(MachineFile, MachineWithoutCpuIsRefused) {
  auto doc = small_machine();
  doc["devices"].erase(0);
  doc["links"].erase(2);  // sw0-cpu0
  const std::string msg = error_of(doc);
  EXPECT_EQ(msg.rfind("bad.json: devices: no CPU; a machine needs its host's CPU", 0), 0u) << msg;
  const auto cpu_only = nlohmann::json::parse(R"({"format": "scalelab-machine/2", "name": "cpu",
    "devices": [{"id": "cpu0", "kind": "cpu"}], "links": []})");
  EXPECT_TRUE(parse_machine(cpu_only, "cpu.json").gpus().empty());
}

// `scalelab topo` refused a NIC with no link ("no route from 'nic1' to 'cpu0'") while predict and
// simulate priced it: the parser, which all three use, now refuses any device with no route to
// each CPU, with the message of the route search itself.
TEST(MachineFile, EveryDeviceNeedsARouteToEachCpu) {
  auto nic = small_machine();
  nic["devices"].push_back({{"id", "nic1"}, {"kind", "nic"}});
  EXPECT_EQ(error_of(nic), "bad.json: no route from 'nic1' to 'cpu0'; check the machine's links");
  nic["links"].push_back({{"between", {"nic1", "sw0"}}, {"type", "pcie"}, {"gen", "3"}, {"width", 8}});
  EXPECT_EQ(parse_machine(nic, "ok.json").nics().size(), 1u);
  // A second socket without its socket link: the GPUs reach cpu0 but nothing reaches cpu1.
  auto sockets = small_machine();
  sockets["devices"].push_back({{"id", "cpu1"}, {"kind", "cpu"}, {"generation", "skylake"}});
  EXPECT_EQ(error_of(sockets), "bad.json: no route from 'cpu0' to 'cpu1'; check the machine's links");
  sockets["links"].push_back({{"between", {"cpu0", "cpu1"}}, {"type", "upi"}, {"gen", "skylake"}});
  EXPECT_EQ(parse_machine(sockets, "ok.json").cpus().size(), 2u);
}

// A GPU on a second socket whose socket link is missing reaches its own CPU but not the GPUs of
// the first: refused naming the first GPU that misses another, and what to add.
TEST(MachineFile, EveryGpuNeedsARouteToEveryOtherGpu) {
  auto doc = small_machine();
  doc["devices"].push_back({{"id", "cpu1"}, {"kind", "cpu"}, {"generation", "skylake"}});
  doc["devices"].push_back({{"id", "gpu2"}, {"kind", "gpu"}, {"arch", "volta"}});
  doc["links"].push_back({{"between", {"gpu2", "cpu1"}}, {"type", "pcie"}, {"gen", "3"}, {"width", 16}});
  EXPECT_EQ(error_of(doc), "bad.json: device 'gpu0' (GPU): has no route to 'gpu2'; add the links that join them");
  doc["links"].push_back({{"between", {"cpu0", "cpu1"}}, {"type", "upi"}, {"gen", "skylake"}});
  EXPECT_EQ(parse_machine(doc, "ok.json").gpus().size(), 3u);
}

// Links whose ends do not fit their type (an InfiniBand link between two GPUs of a node, NVLink to
// a NIC or a CPU, PCIe between two NICs), PCIe widths other than 1, 2, 4, 8 and 16, and a switch
// that no link joins are physically impossible, and refused naming the entry.
TEST(MachineFile, LinksMustFitTheirEnds) {
  struct Case {
    std::string what;
    std::function<void(nlohmann::json&)> apply;
    std::string message;
  };
  const auto with_nics = [](nlohmann::json& d) {
    for (const char* id : {"nic0", "nic1"}) {
      d["devices"].push_back({{"id", id}, {"kind", "nic"}});
      d["links"].push_back({{"between", {id, "sw0"}}, {"type", "pcie"}, {"gen", "3"}, {"width", 16}});
    }
  };
  const auto link = [](const char* a, const char* b, const char* type, const char* gen) {
    return nlohmann::json{{"between", {a, b}}, {"type", type}, {"gen", gen}};
  };
  const std::vector<Case> cases = {
      {"infiniband between GPUs", [&](auto& d) { d["links"][3] = link("gpu0", "gpu1", "infiniband", "hdr"); },
       "links[3] (gpu0-gpu1): infiniband joins nodes, not the devices of one: describe it in \"network\""},
      {"ethernet between NICs", [&](auto& d) { with_nics(d); d["links"].push_back(link("nic0", "nic1", "ethernet", "100g")); },
       "links[6] (nic0-nic1): ethernet joins nodes, not the devices of one"},
      {"nvlink to a NIC", [&](auto& d) { with_nics(d); d["links"].push_back(link("gpu0", "nic0", "nvlink", "2")); },
       "links[6] (gpu0-nic0): nvlink cannot join a GPU and a NIC; nvlink joins a GPU to a GPU or an NVSwitch, or two NVSwitches"},
      {"nvlink to a CPU", [&](auto& d) { d["links"].push_back(link("cpu0", "gpu1", "nvlink", "2")); },
       "links[4] (cpu0-gpu1): nvlink cannot join a CPU and a GPU"},
      {"pcie between NICs", [&](auto& d) { with_nics(d); d["links"].push_back(link("nic0", "nic1", "pcie", "3")); },
       "links[6] (nic0-nic1): pcie cannot join a NIC and a NIC; pcie joins a GPU, NIC, CPU or PCIe switch to a CPU or a PCIe switch"},
      {"pcie between GPUs", [&](auto& d) { d["links"][3] = link("gpu0", "gpu1", "pcie", "3"); },
       "links[3] (gpu0-gpu1): pcie cannot join a GPU and a GPU"},
      {"pcie between CPUs", [&](auto& d) {
         d["devices"].push_back({{"id", "cpu1"}, {"kind", "cpu"}});
         d["links"].push_back(link("cpu0", "cpu1", "pcie", "3"));
       }, "links[4] (cpu0-cpu1): pcie cannot join a CPU and a CPU; pcie joins a GPU, NIC, CPU or PCIe switch to a CPU or a PCIe switch, never two CPUs"},
      {"pcie to an NVSwitch", [&](auto& d) {
         d["switches"].push_back({{"id", "nvs0"}, {"kind", "nvswitch"}});
         d["links"].push_back(link("nvs0", "sw0", "pcie", "3"));
       }, "links[4] (nvs0-sw0): pcie cannot join an NVSwitch and a PCIe switch"},
      {"xgmi to a switch", [&](auto& d) { d["links"][3] = link("gpu0", "sw0", "xgmi", "2"); },
       "links[3] (gpu0-sw0): xgmi cannot join a GPU and a PCIe switch; xgmi joins two GPUs"},
      {"upi to a GPU", [&](auto& d) { d["links"].push_back(link("gpu0", "cpu0", "upi", "skylake")); },
       "links[4] (gpu0-cpu0): upi cannot join a GPU and a CPU; upi joins two CPUs"},
      {"memory link", [&](auto& d) { d["links"].push_back(link("gpu0", "cpu0", "memory", "ddr4")); },
       "links[4] (gpu0-cpu0): \"memory\" is not a link; give a CPU's memory as its \"mem_bw_GBps\""},
      {"pcie width 3", [](auto& d) { d["links"][0]["width"] = 3; },
       "links[0] (gpu0-sw0): \"width\" is 3; a PCIe link is 1, 2, 4, 8 or 16 lanes wide"},
      {"pcie width 12", [](auto& d) { d["links"][2]["width"] = 12; }, "links[2] (sw0-cpu0): \"width\" is 12; a PCIe link is"},
      {"pcie width 32", [](auto& d) { d["links"][2]["width"] = 32; }, "links[2] (sw0-cpu0): \"width\" is 32; a PCIe link is"},
      {"nvswitch with no link", [](auto& d) { d["switches"].push_back({{"id", "nvs0"}, {"kind", "nvswitch"}}); },
       "switches[1] (nvs0): no link joins it; link it to its devices or remove it"},
      {"pcie switch with no link", [](auto& d) { d["switches"].push_back({{"id", "sw1"}, {"kind", "pcie"}}); },
       "switches[1] (sw1): no link joins it"},
  };
  for (const Case& k : cases) {
    auto doc = small_machine();
    k.apply(doc);
    const std::string msg = error_of(doc);
    EXPECT_EQ(msg.rfind("bad.json: " + k.message, 0), 0u) << k.what << ": " << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << k.what;
  }
  // What real machines have: every width of the PCIe standard, PCIe switches under PCIe switches
  // (PXB), GPUs on NVSwitches, NVSwitches joined to each other (DGX-2's two boards).
  auto ok = small_machine();
  for (const int w : {1, 2, 4, 8, 16}) {
    ok["links"][0]["width"] = w;
    EXPECT_NO_THROW((void)parse_machine(ok, "ok.json")) << w;
  }
  ok["switches"].push_back({{"id", "sw1"}, {"kind", "pcie"}});
  ok["switches"].push_back({{"id", "nvs0"}, {"kind", "nvswitch"}});
  ok["switches"].push_back({{"id", "nvs1"}, {"kind", "nvswitch"}});
  ok["links"][1]["between"] = {"gpu1", "sw1"};
  for (const auto& l : {link("sw1", "sw0", "pcie", "3"), link("gpu0", "nvs0", "nvlink", "2"), link("gpu1", "nvs1", "nvlink", "2"),
                        link("nvs0", "nvs1", "nvlink", "2")}) {
    ok["links"].push_back(l);
  }
  const Machine m = parse_machine(ok, "ok.json");
  EXPECT_EQ(classify(m, m.find_vertex("gpu0"), m.find_vertex("gpu1")).label, "NV2");
}

}  // namespace
}  // namespace scalelab::topo
