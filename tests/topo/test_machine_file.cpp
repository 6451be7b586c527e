// Machine files: the catalog parses, and each kind of malformed file is refused with one line
// naming the file, the entry and the problem.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <unistd.h>

#include "core/error.h"
#include "topo/catalog.h"
#include "topo/machine_file.h"
#include "topo/routes.h"
#include "machine_file_support.h"

namespace scalelab::topo {
namespace {

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
  doc["devices"].push_back({{"id", "gpu2"}, {"kind", "gpu"}, {"arch", "volta"}});
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
  EXPECT_NE(error_of(neg).find("not positive"), std::string::npos);
}

// A GPU's "p2p": false sends its transfers with every other GPU through host memory, NVLink or
// not; the field is a boolean, and only for GPUs.
TEST(MachineFile, AGpuWithoutPeerToPeerGoesThroughHostMemory) {
  auto doc = small_machine();
  const Machine both = parse_machine(doc, "pair.json");
  EXPECT_FALSE(RouteFinder(both, P2P::on).route(1, 2).through_host);
  doc["devices"][2]["p2p"] = false;
  const Machine one = parse_machine(doc, "pair.json");
  EXPECT_EQ(one.devices[2].p2p, PeerAccess::none);
  const Route r = RouteFinder(one, P2P::on).route(one.find_vertex("gpu0"), one.find_vertex("gpu1"));
  EXPECT_TRUE(r.through_host);
  for (int l : r.links) EXPECT_NE(one.links[l].spec.type, LinkType::nvlink);
  EXPECT_EQ(to_json(one)["devices"][2]["p2p"], false);
  EXPECT_FALSE(to_json(both)["devices"][2].contains("p2p"));

  auto text = small_machine();
  text["devices"][1]["p2p"] = "no";
  const std::string e1 = error_of(text);
  EXPECT_NE(e1.find("bad.json: devices[1] (gpu0): \"p2p\" must be true, false or \"nvlink\""), std::string::npos) << e1;
  auto cpu = small_machine();
  cpu["devices"][0]["p2p"] = false;
  const std::string e2 = error_of(cpu);
  EXPECT_NE(e2.find("devices[0] (cpu0): \"p2p\" is for GPUs"), std::string::npos) << e2;
}

// Peer access per pair ("peer_access") overrides the GPUs' own; "nvlink" keeps a bridged pair on
// its bridge and sends PCIe transfers through host memory.
TEST(MachineFile, PeerAccessPerPairAndOverNvlinkOnly) {
  // Three GPUs under one switch: gpu0-gpu1 bridged by NVLink, gpu2 on PCIe only.
  auto doc = small_machine();
  doc["devices"].push_back({{"id", "gpu2"}, {"kind", "gpu"}, {"arch", "ampere"}});
  doc["links"].push_back({{"between", {"gpu2", "sw0"}}, {"type", "pcie"}, {"gen", "3"}, {"width", 16}});
  const Machine plain = parse_machine(doc, "three.json");
  const int g0 = plain.find_vertex("gpu0"), g1 = plain.find_vertex("gpu1"), g2 = plain.find_vertex("gpu2");
  EXPECT_FALSE(RouteFinder(plain, P2P::on).route(g0, g2).through_host);

  // GeForce-like: P2P over the bridge only. The bridged pair keeps NVLink, the others bounce.
  auto bridged = doc;
  for (int d : {1, 2, 3}) bridged["devices"][d]["p2p"] = "nvlink";
  const Machine b = parse_machine(bridged, "three.json");
  const RouteFinder br(b, P2P::on);
  const Route pair = br.route(g0, g1);
  EXPECT_FALSE(pair.through_host);
  ASSERT_EQ(pair.links.size(), 1U);
  EXPECT_EQ(b.links[static_cast<std::size_t>(pair.links[0])].spec.type, LinkType::nvlink);
  EXPECT_TRUE(br.route(g0, g2).through_host);
  EXPECT_EQ(to_json(b)["devices"][1]["p2p"], "nvlink");

  // A pair entry: gpu0-gpu2 without peer access, the rest as the devices say.
  auto pairs = doc;
  pairs["peer_access"] = nlohmann::json::array({{{"between", {"gpu2", "gpu0"}}, {"p2p", false}}});
  const Machine p = parse_machine(pairs, "three.json");
  const RouteFinder pr(p, P2P::on);
  EXPECT_TRUE(pr.route(g0, g2).through_host);
  EXPECT_TRUE(pr.route(g2, g0).through_host);
  EXPECT_FALSE(pr.route(g1, g2).through_host);
  EXPECT_EQ(p.peer_access(g2, g0), PeerAccess::none);
  EXPECT_EQ(to_json(p)["peer_access"][0]["between"][0], "gpu0");
  EXPECT_EQ(to_json(p)["peer_access"][0]["p2p"], false);

  const auto error_with = [&](const nlohmann::json& entry) {
    auto bad = doc;
    bad["peer_access"] = nlohmann::json::array({entry});
    return error_of(bad);
  };
  const std::string missing = error_with({{"between", {"gpu0", "gpu9"}}, {"p2p", false}});
  EXPECT_NE(missing.find("bad.json: peer_access[0] (gpu0-gpu9): 'gpu9' is not a GPU of this machine"), std::string::npos)
      << missing;
  const std::string cpu = error_with({{"between", {"gpu0", "cpu0"}}, {"p2p", false}});
  EXPECT_NE(cpu.find("'cpu0' is not a GPU of this machine"), std::string::npos) << cpu;
  const std::string twice = error_with({{"between", {"gpu1", "gpu1"}}, {"p2p", false}});
  EXPECT_NE(twice.find("names 'gpu1' twice"), std::string::npos) << twice;
  const std::string no_link = error_with({{"between", {"gpu0", "gpu2"}}, {"p2p", "nvlink"}});
  EXPECT_NE(no_link.find("peer_access[0] (gpu0-gpu2): \"p2p\" is \"nvlink\" but no NVLink/xGMI joins these GPUs"),
            std::string::npos)
      << no_link;
  const std::string shape = error_with({{"between", {"gpu0"}}, {"p2p", false}});
  EXPECT_NE(shape.find("peer_access[0]: needs \"between\""), std::string::npos) << shape;
  auto dup = doc;
  dup["peer_access"] = nlohmann::json::array(
      {{{"between", {"gpu0", "gpu2"}}, {"p2p", false}}, {{"between", {"gpu2", "gpu0"}}, {"p2p", true}}});
  EXPECT_NE(error_of(dup).find("peer_access[1] (gpu2-gpu0): the pair is listed twice"), std::string::npos) << error_of(dup);
}

// "host_bridge" on a GPU's PCIe link to its CPU tells PHB (one host bridge) from NODE (two host
// bridges of one socket), as nvidia-smi topo -m does; only PCIe links to a CPU carry one.
TEST(MachineFile, HostBridgesTellPhbFromNode) {
  auto doc = nlohmann::json::parse(R"({
    "format": "scalelab-machine/2", "name": "rc",
    "devices": [{"id": "cpu0", "kind": "cpu", "generation": "milan"},
                {"id": "gpu0", "kind": "gpu", "arch": "ampere"}, {"id": "gpu1", "kind": "gpu", "arch": "ampere"},
                {"id": "gpu2", "kind": "gpu", "arch": "ampere"}],
    "links": [{"between": ["gpu0", "cpu0"], "type": "pcie", "gen": "4", "host_bridge": "rc0"},
              {"between": ["gpu1", "cpu0"], "type": "pcie", "gen": "4", "host_bridge": "rc0"},
              {"between": ["gpu2", "cpu0"], "type": "pcie", "gen": "4", "host_bridge": "rc1"}]
  })");
  const Machine m = parse_machine(doc, "rc.json");
  const int g0 = m.find_vertex("gpu0"), g1 = m.find_vertex("gpu1"), g2 = m.find_vertex("gpu2");
  EXPECT_EQ(classify(m, g0, g1).label, "PHB");
  EXPECT_EQ(classify(m, g0, g2).label, "NODE");
  EXPECT_EQ(classify(m, g2, g1).cls, PathClass::node);
  EXPECT_EQ(to_json(m)["links"][2]["host_bridge"], "rc1");
  auto plain = doc;
  for (auto& l : plain["links"]) l.erase("host_bridge");
  const Machine p = parse_machine(plain, "rc.json");
  EXPECT_EQ(classify(p, g0, g2).label, "PHB");

  auto bad = small_machine();
  bad["links"][3]["host_bridge"] = "rc0";  // the NVLink between the GPUs
  const std::string msg = error_of(bad);
  EXPECT_NE(msg.find("bad.json: links[3] (gpu0-gpu1): \"host_bridge\" names the PCIe host bridge"), std::string::npos) << msg;
  auto to_switch = small_machine();
  to_switch["links"][0]["host_bridge"] = "rc0";  // gpu0 to its PCIe switch, not a CPU
  EXPECT_NE(error_of(to_switch).find("on a PCIe link to a CPU"), std::string::npos);
}

// A network's "efficiency" (the share of the NIC figure its transport reaches) is a number in
// [0.01, 1]; it defaults to 1 and is written back.
TEST(MachineFile, NetworkEfficiency) {
  auto doc = small_machine();
  doc["devices"].push_back({{"id", "nic0"}, {"kind", "nic"}});
  doc["links"].push_back({{"between", {"nic0", "sw0"}}, {"type", "pcie"}, {"gen", "3"}, {"width", 16}});
  doc["nodes"] = 2;
  doc["network"] = {{"type", "ethernet"}, {"gen", "100g"}};
  EXPECT_DOUBLE_EQ(parse_machine(doc, "net.json").network->efficiency, 1.0);
  doc["network"]["efficiency"] = 0.6;
  const Machine m = parse_machine(doc, "net.json");
  EXPECT_DOUBLE_EQ(m.network->efficiency, 0.6);
  EXPECT_DOUBLE_EQ(to_json(m)["network"]["efficiency"].get<double>(), 0.6);
  for (const nlohmann::json& bad : {nlohmann::json(1.5), nlohmann::json(0), nlohmann::json("high")}) {
    doc["network"]["efficiency"] = bad;
    const std::string msg = error_of(doc);
    EXPECT_NE(msg.find("bad.json: network: \"efficiency\" is " + bad.dump() + "; give the share"), std::string::npos) << msg;
  }
  // The one fabric the model prices: another topology is refused, not priced as non-blocking.
  doc["network"]["efficiency"] = 1;
  doc["network"]["topology"] = "fat-tree";
  EXPECT_EQ(parse_machine(doc, "net.json").network->topology, "fat-tree");
  doc["network"]["topology"] = "torus";
  const std::string msg = error_of(doc);
  EXPECT_NE(msg.find("bad.json: network: \"topology\" is \"torus\"; the model prices a non-blocking fat-tree only"),
            std::string::npos) << msg;
}

// Each field out of its range (docs/machine-format.md) is refused naming the file, the entry and
// the field; so are a missing or foreign format and an id that links could not name.
TEST(MachineFile, FieldsOutOfRangeAreNamed) {
  struct Case {
    std::string what;
    std::function<void(nlohmann::json&)> apply;
    std::vector<std::string> words;
  };
  const std::vector<Case> cases = {
      {"no format", [](auto& d) { d.erase("format"); }, {"top level", "\"format\" is missing", "scalelab-machine/2"}},
      {"other format", [](auto& d) { d["format"] = "scalelab-workload/1"; }, {"top level", "'scalelab-workload/1'", "scalelab-machine/2"}},
      {"memory bandwidth 0", [](auto& d) { d["devices"][1]["mem_bw_GBps"] = 0; }, {"devices[1] (gpu0)", "mem_bw_GBps", "not positive"}},
      {"tiny link bandwidth", [](auto& d) { d["links"][2]["bw_GBps"] = 1e-300; }, {"links[2] (sw0-cpu0)", "bw_GBps", "too small"}},
      {"huge link bandwidth", [](auto& d) { d["links"][2]["bw_GBps"] = 1e300; }, {"links[2] (sw0-cpu0)", "bw_GBps", "too large"}},
      {"huge width", [](auto& d) { d["links"][0]["width"] = 1e18; }, {"links[0] (gpu0-sw0)", "width", "1 to 32"}},
      {"fractional count", [](auto& d) { d["links"][3]["count"] = 1.5; }, {"links[3] (gpu0-gpu1)", "count", "whole number"}},
      {"zero count", [](auto& d) { d["links"][3]["count"] = 0; }, {"links[3] (gpu0-gpu1)", "count", "1 to 64"}},
      {"huge tflops", [](auto& d) { d["devices"][2]["fp32_tflops"] = 1e9; }, {"devices[2] (gpu1)", "fp32_tflops", "too large"}},
      {"zero memory", [](auto& d) { d["devices"][2]["memory_GiB"] = 0; }, {"devices[2] (gpu1)", "memory_GiB"}},
      {"zero cores", [](auto& d) { d["devices"][0]["cores"] = 0; }, {"devices[0] (cpu0)", "cores"}},
      {"text for a figure", [](auto& d) { d["devices"][0]["mem_bw_GBps"] = "fast"; }, {"devices[0] (cpu0)", "mem_bw_GBps", "number"}},
      {"huge node count", [](auto& d) { d["nodes"] = 1e9; }, {"top level", "nodes", "whole number from 1 to"}},
      {"empty device id", [](auto& d) { d["devices"][2]["id"] = ""; }, {"devices[2]", "\"id\" is \"\""}},
      {"id with a space", [](auto& d) { d["devices"][2]["id"] = "gpu 1"; }, {"devices[2]", "without spaces"}},
      {"empty switch id", [](auto& d) { d["switches"][0]["id"] = ""; }, {"switches[0]", "\"id\""}},
      {"no arch", [](auto& d) { d["devices"][1].erase("arch"); }, {"devices[1] (gpu0)", "missing \"arch\"", "hopper, blackwell"}},
      {"unknown arch", [](auto& d) { d["devices"][2]["arch"] = "kepler9"; }, {"devices[2] (gpu1)", "unknown \"arch\" 'kepler9'", "use one of pascal, volta"}},
      {"arch as a number", [](auto& d) { d["devices"][2]["arch"] = 3.5; }, {"devices[2] (gpu1)", "\"arch\" must be a string"}},
      {"arch on a CPU", [](auto& d) { d["devices"][0]["arch"] = "volta"; }, {"devices[0] (cpu0)", "\"arch\" is for GPUs"}},
      {"kind as a number", [](auto& d) { d["devices"][2]["kind"] = 16; }, {"devices[2] (gpu1)", "unknown device kind '16'"}},
      // A misspelt key would leave its figure unset without a word.
      {"misspelt device key", [](auto& d) { d["devices"][1]["fp32_tflpos"] = 14; }, {"devices[1] (gpu0)", "unknown key \"fp32_tflpos\"", "fp32_tflops"}},
      {"misspelt top-level key", [](auto& d) { d["link"] = nlohmann::json::array(); }, {"top level", "unknown key \"link\"", "links"}},
      {"unknown link key", [](auto& d) { d["links"][3]["lanes"] = 4; }, {"links[3] (gpu0-gpu1)", "unknown key \"lanes\"", "width"}},
      {"unknown switch key", [](auto& d) { d["switches"][0]["ports"] = 4; }, {"switches[0] (sw0)", "unknown key \"ports\""}},
  };
  for (const Case& k : cases) {
    auto doc = small_machine();
    k.apply(doc);
    const std::string msg = error_of(doc);
    EXPECT_EQ(msg.rfind("bad.json: ", 0), 0u) << k.what << ": " << msg;
    for (const auto& w : k.words) EXPECT_NE(msg.find(w), std::string::npos) << k.what << ": " << msg << " lacks " << w;
  }
}

// Format 1 had no "arch": it is taken from each GPU's model name (Volta when the name is not known,
// as format 1's readers did), and one warning line says so; format 2 files give none.
TEST(MachineFile, FormatOneTakesTheArchitectureFromModelNamesWithOneWarning) {
  auto doc = small_machine();
  doc["format"] = "scalelab-machine/1";
  doc["devices"][1].erase("arch");
  doc["devices"][2].erase("arch");
  doc["devices"][1]["model"] = "NVIDIA H800 80GB HBM3";
  doc["devices"][2]["model"] = "Mystery Accelerator";
  const Machine m = parse_machine(doc, "old.json");
  EXPECT_EQ(m.devices[1].arch, GpuArch::hopper);
  EXPECT_EQ(m.devices[2].arch, GpuArch::volta);
  ASSERT_EQ(m.warnings.size(), 1u);
  for (const std::string w : {"old.json: format 1 gives no GPU \"arch\"", "1 as hopper, 1 as volta", "scalelab-machine/2"}) {
    EXPECT_NE(m.warnings[0].find(w), std::string::npos) << m.warnings[0] << " lacks " << w;
  }
  EXPECT_TRUE(parse_machine(small_machine(), "new.json").warnings.empty());
  for (const auto& e : catalog()) EXPECT_TRUE(resolve_machine(e.name).warnings.empty()) << e.name;
}

TEST(GpuArch, ProductNamesMapToTheirArchitecture) {
  const std::vector<std::pair<std::string, GpuArch>> cases = {
      {"Tesla V100-SXM2-16GB", GpuArch::volta},  {"TITAN V", GpuArch::volta},
      {"Tesla P100-PCIE-16GB", GpuArch::pascal}, {"GeForce GTX 1080 Ti", GpuArch::pascal},
      {"Tesla T4", GpuArch::turing},             {"GeForce RTX 2080 Ti", GpuArch::turing},
      {"A100-SXM4-40GB", GpuArch::ampere},       {"NVIDIA A10G", GpuArch::ampere},
      {"NVIDIA RTX A6000", GpuArch::ampere},     {"GeForce RTX 3090", GpuArch::ampere},
      {"NVIDIA GeForce RTX 4090", GpuArch::ada}, {"NVIDIA L40S", GpuArch::ada},
      {"NVIDIA L4", GpuArch::ada},               {"NVIDIA RTX 6000 Ada Generation", GpuArch::ada},
      {"NVIDIA H100 80GB HBM3", GpuArch::hopper}, {"NVIDIA H800", GpuArch::hopper},
      {"NVIDIA GH200 480GB", GpuArch::hopper},   {"NVIDIA H200", GpuArch::hopper},
      {"NVIDIA B200", GpuArch::blackwell},       {"NVIDIA GeForce RTX 5090", GpuArch::blackwell},
      {"AMD Instinct MI250X", GpuArch::cdna2},   {"AMD Instinct MI300X", GpuArch::cdna3},
  };
  for (const auto& [name, arch] : cases) {
    const auto got = arch_from_model_name(name);
    ASSERT_TRUE(got.has_value()) << name;
    EXPECT_EQ(*got, arch) << name << " -> " << name_of(*got);
  }
  EXPECT_FALSE(arch_from_model_name("Xeon Gold 6148").has_value());
  EXPECT_FALSE(arch_from_model_name("").has_value());
}

TEST(GpuArch, ComputeCapabilitiesAndNamesRoundTrip) {
  EXPECT_EQ(arch_from_compute_capability(7, 0), GpuArch::volta);
  EXPECT_EQ(arch_from_compute_capability(7, 5), GpuArch::turing);
  EXPECT_EQ(arch_from_compute_capability(8, 0), GpuArch::ampere);
  EXPECT_EQ(arch_from_compute_capability(8, 6), GpuArch::ampere);
  EXPECT_EQ(arch_from_compute_capability(8, 9), GpuArch::ada);
  EXPECT_EQ(arch_from_compute_capability(9, 0), GpuArch::hopper);
  EXPECT_EQ(arch_from_compute_capability(10, 0), GpuArch::blackwell);
  EXPECT_EQ(arch_from_compute_capability(12, 0), GpuArch::blackwell);
  for (const auto a : {GpuArch::pascal, GpuArch::volta, GpuArch::turing, GpuArch::ampere, GpuArch::ada, GpuArch::hopper,
                       GpuArch::blackwell, GpuArch::cdna2, GpuArch::cdna3}) {
    EXPECT_EQ(parse_gpu_arch(name_of(a)), a);
  }
  EXPECT_FALSE(parse_gpu_arch("Hopper").has_value());
}

// A node past the bounds of topo/machine.h is refused, naming the count and the bound; one at
// the GPU bound still parses.
TEST(MachineFile, NodeSizeIsBounded) {
  auto with_gpus = [](int n) {
    nlohmann::json doc = small_machine();
    for (int g = 2; g < n; ++g) {
      doc["devices"].push_back({{"id", "gpu" + std::to_string(g)}, {"kind", "gpu"}, {"arch", "volta"}});
      doc["links"].push_back({{"between", {"gpu" + std::to_string(g), "sw0"}}, {"type", "pcie"}, {"gen", "3"}, {"width", 16}});
    }
    return doc;
  };
  EXPECT_EQ(parse_machine(with_gpus(kMaxGpusPerNode), "ok.json").gpus_per_node(), kMaxGpusPerNode);
  EXPECT_NE(error_of(with_gpus(kMaxGpusPerNode + 1))
                .find("bad.json: devices: " + std::to_string(kMaxGpusPerNode + 1) + " GPUs in one node, more than " +
                      std::to_string(kMaxGpusPerNode)),
            std::string::npos);

  nlohmann::json switches = small_machine();
  for (int s = 1; s < kMaxVerticesPerNode; ++s) switches["switches"].push_back({{"id", "sw" + std::to_string(s)}, {"kind", "pcie"}});
  EXPECT_NE(error_of(switches).find("bad.json: devices: " + std::to_string(kMaxVerticesPerNode + 3) +
                                    " devices and switches in one node, more than " + std::to_string(kMaxVerticesPerNode)),
            std::string::npos);

  nlohmann::json links = small_machine();
  while (links["links"].size() <= static_cast<std::size_t>(kMaxLinksPerNode)) links["links"].push_back(links["links"][0]);
  EXPECT_NE(error_of(links).find("bad.json: links: " + std::to_string(kMaxLinksPerNode + 1) + " links in one node, more than " +
                                 std::to_string(kMaxLinksPerNode)),
            std::string::npos);
}

// A file larger than any machine file can be is refused before it is read (a sparse file here).
TEST(MachineFile, HugeFileIsRefusedBeforeParsing) {
  const std::filesystem::path path = std::filesystem::temp_directory_path() / ("huge-machine-" + std::to_string(::getpid()) + ".json");
  { std::ofstream(path) << "{"; }
  std::filesystem::resize_file(path, static_cast<std::uintmax_t>(kMaxMachineFileBytes) + (1 << 20));
  try {
    (void)load_machine_file(path.string());
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), 2);
    EXPECT_NE(std::string(e.what()).find(path.string() + ": " + std::to_string((kMaxMachineFileBytes >> 20) + 1) +
                                         " MiB, larger than a machine file can be"),
              std::string::npos)
        << e.what();
  }
  std::filesystem::remove(path);
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
