// Routes, pair classes and rings on catalog machines. Expected bandwidths are derived from the
// link table (topo/link.h), never pasted: e.g. a DGX-1 pair with two NVLinks gets twice the
// model figure of one NVLink 2 link.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "topo/catalog.h"
#include "topo/machine_file.h"
#include "topo/ring.h"
#include "topo/routes.h"

namespace scalelab::topo {
namespace {

double model_of(LinkType t, const std::string& gen, int count = 1, int width = 16) {
  return figures_of(LinkSpec{t, gen, count, width, {}})->model_GBps;
}
double peak_of(LinkType t, const std::string& gen, int count = 1, int width = 16) {
  return figures_of(LinkSpec{t, gen, count, width, {}})->peak_GBps;
}

class Dgx1 : public ::testing::Test {
 protected:
  Machine m = resolve_machine("dgx1");
  int gpu(int i) const { return m.find_vertex("gpu" + std::to_string(i)); }
};

TEST_F(Dgx1, TwoNvlinksCarryTwiceOne) {
  const Route two = route_between(m, gpu(0), gpu(3), P2P::on);
  const Route one = route_between(m, gpu(0), gpu(1), P2P::on);
  EXPECT_DOUBLE_EQ(two.model_GBps, model_of(LinkType::nvlink, "2", 2));
  EXPECT_DOUBLE_EQ(one.model_GBps, model_of(LinkType::nvlink, "2", 1));
  EXPECT_DOUBLE_EQ(two.copy_GBps, 2 * one.copy_GBps);
  EXPECT_EQ(two.links.size(), 1u);
  EXPECT_EQ(classify(m, gpu(0), gpu(3)).label, "NV2");
  EXPECT_EQ(classify(m, gpu(0), gpu(1)).label, "NV1");
}

TEST_F(Dgx1, PairWithoutNvlinkCrossesTheSockets) {
  const Route r = route_between(m, gpu(0), gpu(5), P2P::on);
  EXPECT_EQ(classify(m, gpu(0), gpu(5)).label, "SYS");
  EXPECT_DOUBLE_EQ(r.model_GBps, model_of(LinkType::qpi, "broadwell"));
  EXPECT_NE(describe_link(m, r.bottleneck_link).find("QPI"), std::string::npos);
}

// A copy over PCIe carries 128-byte payloads in 154-byte packets; NVLink copies reach the
// signalling rate (p2pBandwidthLatencyTest: 48.5 of 50 GB/s both ways); a measured (stated)
// figure is what copies reach already.
TEST(Links, CopyFiguresArePciePayloadShareAndNvlinkPeak) {
  EXPECT_NEAR(kPcieCopyEfficiency, 0.831, 0.001);
  const auto gen3 = *figures_of(LinkSpec{LinkType::pcie, "3", 1, 16, {}});
  EXPECT_DOUBLE_EQ(gen3.copy_GBps, 15.75 * kPcieCopyEfficiency);
  const auto nv = *figures_of(LinkSpec{LinkType::nvlink, "2", 2, 16, {}});
  EXPECT_DOUBLE_EQ(nv.copy_GBps, nv.peak_GBps);
  const auto measured = *figures_of(LinkSpec{LinkType::pcie, "4", 1, 16, 21.5});
  EXPECT_DOUBLE_EQ(measured.copy_GBps, 21.5);
  EXPECT_DOUBLE_EQ(measured.peak_GBps, 21.5);
}

TEST_F(Dgx1, P2POffGoesThroughHostMemoryAndStagesTheCopy) {
  const Route r = route_between(m, gpu(0), gpu(1), P2P::off);
  EXPECT_TRUE(r.through_host);
  for (int l : r.links) EXPECT_NE(m.links[l].spec.type, LinkType::nvlink);
  // Two PCIe Gen3 x16 legs: pipelined for collectives, staged (1/(1/a+1/b)) for a peer copy,
  // each leg at the payload share of its signalling rate.
  const double pcie = peak_of(LinkType::pcie, "3") * kPcieCopyEfficiency;
  EXPECT_DOUBLE_EQ(r.model_GBps, model_of(LinkType::pcie, "3"));
  EXPECT_NEAR(r.copy_GBps, 1.0 / (1.0 / pcie + 1.0 / pcie), 1e-9);
}

TEST_F(Dgx1, SameSwitchPairWithoutNvlinkWouldBePix) {
  // gpu0 and gpu1 share plx0: without NVLink their PCIe path crosses one switch.
  const Route r = route_between(m, gpu(0), gpu(1), P2P::off);
  EXPECT_EQ(r.vertices[1], m.find_vertex("plx0"));
}

TEST_F(Dgx1, RingsUseEveryNvlinkBothWays) {
  const RingPlan plan = plan_rings(m, m.gpus(), P2P::on);
  // Each V100 has 6 NVLinks; the channels together use all of them in each direction.
  EXPECT_NEAR(plan.bw_GBps, 6 * model_of(LinkType::nvlink, "2"), 1e-9);
  EXPECT_EQ(plan.channels.size(), 4u);
  for (const auto& c : plan.channels) EXPECT_EQ(c.order.size(), 8u);
}

// With P2P off every ring edge bounces through a CPU's memory. Two edges cross each PCIe switch's
// uplink each way, and NCCL charges those that meet at one Intel CPU 6/5 of their bytes on PCIe
// links: 12 / (2 x 6/5) = 5 GB/s, below the QPI's 6 that the edges across the sockets get.
TEST_F(Dgx1, P2POffRingIsBoundByTheUplinksAsNcclChargesThem) {
  const RingPlan plan = plan_rings(m, m.gpus(), P2P::off);
  EXPECT_TRUE(plan.through_host);
  EXPECT_NEAR(plan.bw_GBps, model_of(LinkType::pcie, "3") / (2 * 6.0 / 5.0), 1e-9);
  const std::string words = describe_bottleneck(m, plan);
  EXPECT_NE(words.find("PCIe Gen3 x16"), std::string::npos) << words;
  EXPECT_NE(words.find("at 6/5 of their bytes through the Intel CPU's root complex"), std::string::npos) << words;
}

TEST(Routes, DgxA100EveryPairIsNv12AndTheRingUsesAllLinks) {
  const Machine m = resolve_machine("dgx-a100");
  const auto g = m.gpus();
  EXPECT_EQ(classify(m, g[0], g[7]).label, "NV12");
  const RingPlan plan = plan_rings(m, g, P2P::on);
  EXPECT_NEAR(plan.bw_GBps, model_of(LinkType::nvlink, "3", 12), 1e-9);
}

// A pair behind NVSwitches uses every switch it shares at once; one route through one switch
// carries a sixth of it on a DGX A100 (two NVLink 3 per GPU and switch, six switches).
TEST(Routes, DgxA100PairBandwidthAddsEverySharedSwitch) {
  const Machine m = resolve_machine("dgx-a100");
  const RouteFinder on(m, P2P::on);
  const int a = m.find_vertex("gpu0"), b = m.find_vertex("gpu5");
  const PairBandwidth pb = on.pair(a, b);
  EXPECT_EQ(pb.paths, 6);
  EXPECT_DOUBLE_EQ(pb.model_GBps, 6 * model_of(LinkType::nvlink, "3", 2));
  EXPECT_DOUBLE_EQ(pb.copy_GBps, 6 * peak_of(LinkType::nvlink, "3", 2));
  EXPECT_DOUBLE_EQ(on.route(a, b).model_GBps, model_of(LinkType::nvlink, "3", 2));
  // Through host memory there is one route, whatever the switches.
  const RouteFinder off(m, P2P::off);
  EXPECT_EQ(off.pair(a, b).paths, 1);
  EXPECT_DOUBLE_EQ(off.pair(a, b).model_GBps, off.route(a, b).model_GBps);
}

TEST_F(Dgx1, PairBandwidthOfADirectLinkIsItsRoute) {
  const RouteFinder on(m, P2P::on);
  for (int j : {1, 3, 5}) {
    const PairBandwidth pb = on.pair(gpu(0), gpu(j));
    EXPECT_EQ(pb.paths, 1);
    EXPECT_DOUBLE_EQ(pb.model_GBps, on.route(gpu(0), gpu(j)).model_GBps);
    EXPECT_DOUBLE_EQ(pb.copy_GBps, on.route(gpu(0), gpu(j)).copy_GBps);
  }
}

TEST(Routes, PcieServerRingNamesTheUpiLink) {
  const Machine m = resolve_machine("pcie-8gpu");
  const RingPlan plan = plan_rings(m, m.gpus(), P2P::on);
  EXPECT_NEAR(plan.bw_GBps, model_of(LinkType::upi, "skylake"), 1e-9);
  const std::string words = describe_bottleneck(m, plan);
  EXPECT_NE(words.find("UPI"), std::string::npos) << words;
  EXPECT_NE(words.find("cpu0 and cpu1"), std::string::npos) << words;
  const auto g = m.gpus();
  EXPECT_EQ(classify(m, g[0], g[1]).label, "PIX");
  EXPECT_EQ(classify(m, g[0], g[4]).label, "SYS");
}

// Through host memory every ring edge of a PCIe switch's four GPUs crosses its uplink: the ring's
// bandwidth is about a quarter of the uplink's, and the words say why. The one edge that meets at
// that socket's Intel CPU counts 6/5, the three that cross the sockets once each (NCCL charges
// only paths through one CPU's root complex): 12 / (6/5 + 3).
TEST(Routes, P2POffPcieServerRingSaysHowManyTransfersShareTheUplink) {
  const Machine m = resolve_machine("pcie-8gpu");
  const RingPlan plan = plan_rings(m, m.gpus(), P2P::off);
  EXPECT_NEAR(plan.bw_GBps, model_of(LinkType::pcie, "3") / (6.0 / 5.0 + 3), 1e-9);
  const std::string words = describe_bottleneck(m, plan);
  EXPECT_NE(words.find("shared by 4 of the ring's transfers each way"), std::string::npos) << words;
  // A link a channel crosses once says nothing about sharing.
  const std::string on = describe_bottleneck(m, plan_rings(m, m.gpus(), P2P::on));
  EXPECT_EQ(on.find("shared by"), std::string::npos) << on;
}

TEST(Routes, OneSocketPcieServerRingIsBoundByPcie) {
  const Machine m = resolve_machine("pcie-4gpu");
  const RingPlan plan = plan_rings(m, m.gpus(), P2P::on);
  EXPECT_NEAR(plan.bw_GBps, model_of(LinkType::pcie, "3"), 1e-9);
}

// Four GPUs, each with 2 NVLink 4 links to each of 4 NVSwitches (41 GB/s per switch) and a PCIe
// Gen5 x16 link (48 GB/s) to one PCIe switch. The widest single route is PCIe, but NCCL rings run
// over NVLink when it closes a ring: the plan must use NVLink only, and its total is what the
// GPUs' NVLinks carry. Searching all links at once gave a PCIe ring plus NVLink rings, above that.
TEST(Routes, RingsStayOnNvlinkWhenAWiderPcieRouteExists) {
  nlohmann::json doc = {{"format", "scalelab-machine/2"}, {"name", "gen5-nvswitch-4"}};
  doc["devices"] = {{{"id", "cpu0"}, {"kind", "cpu"}, {"generation", "sapphirerapids"}}};
  doc["switches"] = {{{"id", "plx0"}, {"kind", "pcie"}}};
  doc["links"] = {{{"between", {"plx0", "cpu0"}}, {"type", "pcie"}, {"gen", "5"}, {"width", 16}}};
  for (int s = 0; s < 4; ++s) doc["switches"].push_back({{"id", "nvs" + std::to_string(s)}, {"kind", "nvswitch"}});
  for (int g = 0; g < 4; ++g) {
    const std::string id = "gpu" + std::to_string(g);
    doc["devices"].push_back({{"id", id}, {"kind", "gpu"}, {"arch", "hopper"}});
    doc["links"].push_back({{"between", {id, "plx0"}}, {"type", "pcie"}, {"gen", "5"}, {"width", 16}});
    for (int s = 0; s < 4; ++s) {
      doc["links"].push_back({{"between", {id, "nvs" + std::to_string(s)}}, {"type", "nvlink"}, {"gen", "4"}, {"count", 2}});
    }
  }
  const Machine m = parse_machine(doc, "gen5-nvswitch-4.json");
  ASSERT_GT(model_of(LinkType::pcie, "5"), model_of(LinkType::nvlink, "4", 2));  // the premise
  const RingPlan plan = plan_rings(m, m.gpus(), P2P::on);
  ASSERT_FALSE(plan.channels.empty());
  for (const auto& c : plan.channels) {
    for (const Route& r : c.edges) {
      for (int l : r.links) EXPECT_EQ(m.links[l].spec.type, LinkType::nvlink) << describe_link(m, l);
    }
  }
  EXPECT_NEAR(plan.bw_GBps, 4 * model_of(LinkType::nvlink, "4", 2), 1e-6);
}

// Through host memory every byte is written into the CPU's memory and read back out. Two GPUs
// without peer access on a desktop socket of 40 GB/s: the ring's two transfers each way share
// it, 40 / (2 transfers x 2 passes) = 10 GB/s, below the PCIe Gen4 legs (24); the words name the
// memory. Without a memory figure the links alone decide.
TEST(Routes, RingsThroughHostMemoryShareTheCpusMemory) {
  nlohmann::json doc = {{"format", "scalelab-machine/2"}, {"name", "desktop-2gpu"}};
  doc["devices"] = {{{"id", "cpu0"}, {"kind", "cpu"}, {"generation", "milan"}, {"mem_bw_GBps", 40}}};
  doc["links"] = nlohmann::json::array();
  for (int g = 0; g < 2; ++g) {
    const std::string id = "gpu" + std::to_string(g);
    doc["devices"].push_back({{"id", id}, {"kind", "gpu"}, {"arch", "ada"}, {"p2p", false}});
    doc["links"].push_back({{"between", {id, "cpu0"}}, {"type", "pcie"}, {"gen", "4"}, {"width", 16}});
  }
  const Machine m = parse_machine(doc, "desktop.json");
  const RingPlan plan = plan_rings(m, m.gpus(), P2P::on);
  EXPECT_NEAR(plan.bw_GBps, 40.0 / 4, 1e-9);
  EXPECT_EQ(plan.bottleneck_host, m.find_vertex("cpu0"));
  const std::string words = describe_bottleneck(m, plan);
  EXPECT_NE(words.find("through cpu0's memory (40 GB/s"), std::string::npos) << words;
  EXPECT_NE(words.find("2 of the ring's transfers share it"), std::string::npos) << words;

  doc["devices"][0].erase("mem_bw_GBps");
  const Machine unknown = parse_machine(doc, "desktop.json");
  EXPECT_NEAR(plan_rings(unknown, unknown.gpus(), P2P::on).bw_GBps, model_of(LinkType::pcie, "4"), 1e-9);
}

// NCCL's transports: peer access over NVLink and PCIe switches, host memory (SHM) where two GPUs
// meet only at a CPU, except on AMD hosts in jobs of at most two GPUs. A peer copy (topo's pair
// figures) keeps its direct route.
TEST(Routes, RingsUseNcclsSharedMemoryTransportBetweenGpusThatMeetAtACpu) {
  const auto machine = [](const std::string& generation, int gpus) {
    nlohmann::json doc = {{"format", "scalelab-machine/2"}, {"name", "rc"}};
    doc["devices"] = {{{"id", "cpu0"}, {"kind", "cpu"}, {"generation", generation}}};
    doc["links"] = nlohmann::json::array();
    for (int g = 0; g < gpus; ++g) {
      const std::string id = "gpu" + std::to_string(g);
      doc["devices"].push_back({{"id", id}, {"kind", "gpu"}, {"arch", "ampere"}});
      doc["links"].push_back({{"between", {id, "cpu0"}}, {"type", "pcie"}, {"gen", "4"}, {"width", 16}});
    }
    return parse_machine(doc, "rc.json");
  };
  const Machine intel2 = machine("icelake", 2), amd2 = machine("milan", 2), amd3 = machine("milan", 3);
  EXPECT_TRUE(plan_rings(intel2, intel2.gpus(), P2P::on).through_host);
  EXPECT_FALSE(plan_rings(amd2, amd2.gpus(), P2P::on).through_host);
  EXPECT_TRUE(plan_rings(amd3, amd3.gpus(), P2P::on).through_host);
  // Each GPU's link carries one edge out and one in; through the Intel CPU's root complex NCCL
  // charges them 6/5 (INTEL_P2P_OVERHEAD), through AMD's not.
  EXPECT_NEAR(plan_rings(intel2, intel2.gpus(), P2P::on).bw_GBps, model_of(LinkType::pcie, "4") * 5 / 6, 1e-9);
  EXPECT_NEAR(plan_rings(amd2, amd2.gpus(), P2P::on).bw_GBps, model_of(LinkType::pcie, "4"), 1e-9);
  EXPECT_NEAR(plan_rings(amd3, amd3.gpus(), P2P::on).bw_GBps, model_of(LinkType::pcie, "4"), 1e-9);
  EXPECT_NE(describe_bottleneck(intel2, plan_rings(intel2, intel2.gpus(), P2P::on)).find("6/5"), std::string::npos);
  EXPECT_EQ(describe_bottleneck(amd3, plan_rings(amd3, amd3.gpus(), P2P::on)).find("6/5"), std::string::npos);
  EXPECT_FALSE(RouteFinder(intel2, P2P::on).route(intel2.gpus()[0], intel2.gpus()[1]).through_host);

  const Machine m = resolve_machine("pcie-8gpu");
  const RingPlan on = plan_rings(m, m.gpus(), P2P::on);
  EXPECT_TRUE(on.through_host);
  EXPECT_NEAR(on.bw_GBps, model_of(LinkType::upi, "skylake"), 1e-9);
  const std::string words = describe_bottleneck(m, on);
  EXPECT_NE(words.find("NCCL's shared-memory transport"), std::string::npos) << words;
  // Edges under one PCIe switch stay peer-to-peer.
  int direct = 0;
  for (const Route& e : on.channels.front().edges) direct += e.through_host ? 0 : 1;
  EXPECT_GT(direct, 0);
  EXPECT_NE(describe_bottleneck(m, plan_rings(m, m.gpus(), P2P::off)).find("P2P off"), std::string::npos);
}

}  // namespace
}  // namespace scalelab::topo
