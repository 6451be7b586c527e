// The NCCL-like GPU model and the Predictor on catalog machines: values derived in the test from
// NCCL's formula time = latency + bytes / algbw with the constants of docs/references.md (NCCL's constants).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "core/error.h"
#include "collectives/cost_formulas.h"
#include "model/nccl.h"
#include "model/predict.h"
#include "model/profile.h"

#include <nlohmann/json.hpp>
#include "topo/catalog.h"

namespace scalelab::model {
namespace {

using collectives::Collective;

double nvlink_model(const std::string& gen, int count) {
  return topo::figures_of(topo::LinkSpec{topo::LinkType::nvlink, gen, count, 16, {}})->model_GBps;
}

TEST(NcclModel, DgxA100RingSimple) {
  const auto m = topo::resolve_machine("dgx-a100");
  const Predictor pr(m, topo::select_gpus(m, "8"), topo::P2P::on);
  const double n = 256e6;
  const auto x = pr.predict(Collective::allreduce, "ring", topo::Protocol::simple, n);
  // Ring: base 8.4 us + 2(p-1) hops of 3.4 us (NVLink, Simple); busbw = 12 NVLink 3 links.
  const double p = 8, bus = nvlink_model("3", 12);
  const double expected = (8.4 + 2 * (p - 1) * 3.4) * 1e-6 + n / (bus / (2 * (p - 1) / p) * 1e9);
  EXPECT_NEAR(x.time_s, expected, expected * 1e-9);
  EXPECT_EQ(x.detail, "NCCL ring, Simple");
}

// On GPUs "auto" is what NCCL would run, even where a textbook algorithm's formula is faster:
// with P2P off on the PCIe server, Rabenseifner over the pair routes beats NCCL's host-memory ring
// on paper, but NCCL does not run it.
TEST(NcclModel, AutoIsNcclsChoiceAndTextbookAlgorithmsSayWhatTheyAre) {
  const auto m = topo::resolve_machine("pcie-8gpu");
  const Predictor pr(m, topo::select_gpus(m, "8"), topo::P2P::off);
  const double n = 1 << 30;
  const Prediction autod = pr.predict(Collective::allreduce, "auto", std::nullopt, n);
  const Prediction lib = pr.predict(Collective::allreduce, "library", std::nullopt, n);
  const Prediction rab = pr.predict(Collective::allreduce, "rabenseifner", std::nullopt, n);
  EXPECT_EQ(autod.algorithm, "library");
  EXPECT_DOUBLE_EQ(autod.time_s, lib.time_s);
  EXPECT_NE(autod.detail.find("NCCL ring"), std::string::npos) << autod.detail;
  EXPECT_LT(rab.time_s, autod.time_s);  // faster on paper, and not chosen
  EXPECT_NE(rab.detail.find("textbook rabenseifner"), std::string::npos) << rab.detail;
  EXPECT_NE(rab.detail.find("not an NCCL algorithm"), std::string::npos) << rab.detail;
}

TEST(NcclModel, LLHalvesTheBandwidthButWinsSmallMessages) {
  const auto m = topo::resolve_machine("dgx-a100");
  const Predictor pr(m, topo::select_gpus(m, "8"), topo::P2P::on);
  const auto small_ll = pr.predict(Collective::allreduce, "ring", topo::Protocol::ll, 1024);
  const auto small_simple = pr.predict(Collective::allreduce, "ring", topo::Protocol::simple, 1024);
  EXPECT_LT(small_ll.time_s, small_simple.time_s);
  const auto big_ll = pr.predict(Collective::allreduce, "ring", topo::Protocol::ll, 1e9);
  const auto big_simple = pr.predict(Collective::allreduce, "ring", topo::Protocol::simple, 1e9);
  // LL: half the bus bandwidth, capped at llMaxBw (Ampere, one node: 87.7 GB/s).
  const double bus = nvlink_model("3", 12);
  EXPECT_NEAR(big_ll.busbw_GBps / big_simple.busbw_GBps, std::min(0.5 * bus, 87.7) / bus, 0.01);
}

TEST(NcclModel, NvlsOnlyOnHopperNvswitch) {
  const auto h = topo::resolve_machine("dgx-h100");
  const Predictor ph(h, topo::select_gpus(h, "8"), topo::P2P::on);
  const auto nvls = ph.predict(Collective::allreduce, "nvls", std::nullopt, 8e9);
  const auto ring = ph.predict(Collective::allreduce, "ring", std::nullopt, 8e9);
  EXPECT_GT(nvls.busbw_GBps, ring.busbw_GBps);
  const auto a = topo::resolve_machine("dgx-a100");
  const Predictor pa(a, topo::select_gpus(a, "8"), topo::P2P::on);
  EXPECT_TRUE(std::isnan(pa.predict(Collective::allreduce, "nvls", std::nullopt, 8e9).time_s));
}

// The constants follow the GPUs' stated architecture, not their model names: a DGX H100 whose
// GPUs are named "H800" (no name the old guess knew) keeps NVLS, and the DGX A100 relabelled as
// Blackwell gains it, with NCCL's Blackwell NVLS efficiency (0.74 against Hopper's 0.85).
TEST(NcclModel, ConstantsFollowTheStatedArchitecture) {
  auto h = topo::resolve_machine("dgx-h100");
  const Predictor hopper(h, topo::select_gpus(h, "8"), topo::P2P::on);
  for (auto& d : h.devices) {
    if (d.kind == topo::DeviceKind::gpu) d.model = "H800-SXM5-80GB";
  }
  const Predictor h800(h, topo::select_gpus(h, "8"), topo::P2P::on);
  EXPECT_DOUBLE_EQ(h800.predict(Collective::allreduce, "nvls", std::nullopt, 8e9).busbw_GBps,
                   hopper.predict(Collective::allreduce, "nvls", std::nullopt, 8e9).busbw_GBps);
  for (auto& d : h.devices) {
    if (d.kind == topo::DeviceKind::gpu) d.arch = topo::GpuArch::blackwell;
  }
  const Predictor blackwell(h, topo::select_gpus(h, "8"), topo::P2P::on);
  const double bw = blackwell.predict(Collective::allreduce, "nvls", std::nullopt, 8e9).busbw_GBps;
  const double hw = hopper.predict(Collective::allreduce, "nvls", std::nullopt, 8e9).busbw_GBps;
  EXPECT_NEAR(bw / hw, 0.74 / 0.85, 0.02);

  // LL's ceiling: Volta 39 GB/s, Ampere and Ada 87.7 (llMaxBws, one node).
  auto a = topo::resolve_machine("dgx-a100");
  const Predictor ampere(a, topo::select_gpus(a, "8"), topo::P2P::on);
  for (auto& d : a.devices) {
    if (d.kind == topo::DeviceKind::gpu) d.arch = topo::GpuArch::ada;
  }
  const Predictor ada(a, topo::select_gpus(a, "8"), topo::P2P::on);
  for (auto& d : a.devices) {
    if (d.kind == topo::DeviceKind::gpu) d.arch = topo::GpuArch::volta;
  }
  const Predictor volta(a, topo::select_gpus(a, "8"), topo::P2P::on);
  const auto ll = [](const Predictor& p) { return p.predict(Collective::allreduce, "ring", topo::Protocol::ll, 1e9).busbw_GBps; };
  EXPECT_DOUBLE_EQ(ll(ada), ll(ampere));
  EXPECT_LT(ll(volta), ll(ampere));
}

TEST(NcclModel, P2POffIsSlowerOnDgx1) {
  const auto m = topo::resolve_machine("dgx1");
  const Predictor on(m, topo::select_gpus(m, "8"), topo::P2P::on);
  const Predictor off(m, topo::select_gpus(m, "8"), topo::P2P::off);
  const double n = 512e6;
  EXPECT_GT(on.predict(Collective::allreduce, "auto", std::nullopt, n).busbw_GBps,
            5 * off.predict(Collective::allreduce, "auto", std::nullopt, n).busbw_GBps);
  // Through host memory two transfers share each PCIe switch's uplink, each counted at 6/5 through
  // the Intel CPU as NCCL counts it: 5 GB/s, below the QPI's 6.
  EXPECT_NE(off.bottleneck().find("PCIe Gen3 x16 link between plx0 and cpu0"), std::string::npos) << off.bottleneck();
  EXPECT_NE(off.bottleneck().find("6/5"), std::string::npos) << off.bottleneck();
}

TEST(NcclModel, AcrossNodesTheNicsBound) {
  const auto m = topo::resolve_machine("superpod-a100");
  const Predictor pr(m, topo::select_gpus(m, "64"), topo::P2P::on);
  const auto x = pr.predict(Collective::allreduce, "ring", topo::Protocol::simple, 1e12);
  // 8 HDR NICs per node at NCCL's 24 GB/s each, below the 240 GB/s NVSwitch ring.
  const double nics = 8 * 24.0;
  EXPECT_NEAR(x.busbw_GBps, nics, nics * 0.01);
  EXPECT_NE(pr.bottleneck().find("network"), std::string::npos);
}

// NVLS on one node, from NCCL's NVLS graph: one channel per GPU (a head), each given
// port / (heads + 1) of a GPU's NVLinks (a head moves its share twice), times nvlsEfficiency x
// (ch - 1)/ch x 2; nccl-tests' busbw is that sum. DGX H100: 18 NVLink 4 x 20.6 = 370.8 GB/s.
TEST(NcclModel, NvlsPerHeadChannelOnOneNode) {
  const auto h = topo::resolve_machine("dgx-h100");
  const Predictor ph(h, topo::select_gpus(h, "8"), topo::P2P::on);
  const double port = nvlink_model("4", 18), heads = 8;
  const double expected = heads * port / (heads + 1) * 0.85 * (heads - 1) / heads * 2;
  const auto nvls = ph.predict(Collective::allreduce, "nvls", std::nullopt, 8e9);
  EXPECT_NEAR(nvls.busbw_GBps, expected * (8e9 / (expected / 1.75 * 1e9)) / (25e-6 + 8e9 / (expected / 1.75 * 1e9)),
              expected * 1e-3);
  EXPECT_EQ(nvls.detail, "NCCL nvls, Simple");
}

// Across nodes NCCL's NVLS-Tree and Tree move the buffer across the network once each way per
// node, not 2(n-1)/n times as the ring, so their busbw may exceed the NICs' sum. Two DGX H100
// nodes (8 NDR NICs at 48): NVLS-Tree's channel is capped at perChMaxNVLSTreeBw, 57.7 GB/s on two
// nodes and 45.5 on more; on four nodes the ring (8 x 48 = 384) wins at 8 GB, NVLS-Tree (lower
// latency) at 128 MB. Tree alone is capped at perChMaxTreeBw.
TEST(NcclModel, AcrossNodesNvlsTreeAndTreeCanPassTheNicsSum) {
  const auto m = topo::resolve_machine("cluster-h100");
  const Predictor two(m, topo::select_gpus(m, "16"), topo::P2P::on);
  const auto best = two.predict(Collective::allreduce, "auto", std::nullopt, 8e9);
  EXPECT_EQ(best.detail, "NCCL nvls_tree, Simple");
  const double nvls_tree = 8 * 57.7;
  EXPECT_NEAR(best.busbw_GBps, nvls_tree, nvls_tree * 0.01);
  EXPECT_GT(best.busbw_GBps, 8 * 48.0);
  // "nvls" across nodes means NVLS-Tree.
  EXPECT_EQ(two.predict(Collective::allreduce, "nvls", std::nullopt, 8e9).detail, "NCCL nvls_tree, Simple");
  const auto tree = two.predict(Collective::allreduce, "tree_pipelined", topo::Protocol::simple, 8e9);
  EXPECT_EQ(tree.detail, "NCCL tree, Simple");
  // Tree: min(0.92 x 8 channels x min(NVLink share, 2 x 48), 8 x 41.4), algbw half of it.
  const double tree_bw = std::min(0.92 * 8 * std::min(nvlink_model("4", 18) / 8, 2 * 48.0), 8 * 41.4);
  EXPECT_NEAR(tree.algbw_GBps, 0.5 * tree_bw, 0.5 * tree_bw * 0.01);

  const Predictor four(m, topo::select_gpus(m, "32"), topo::P2P::on);
  EXPECT_EQ(four.predict(Collective::allreduce, "auto", std::nullopt, 8e9).detail, "NCCL ring, Simple");
  EXPECT_EQ(four.predict(Collective::allreduce, "auto", std::nullopt, 128e6).detail, "NCCL nvls_tree, Simple");
  EXPECT_NEAR(four.predict(Collective::allreduce, "nvls", std::nullopt, 1e12).busbw_GBps, 8 * 45.5, 8 * 45.5 * 0.01);

  // One node: NVLS, not NVLS-Tree (and a tree is the textbook one, below).
  const Predictor one(m, topo::select_gpus(m, "8"), topo::P2P::on);
  EXPECT_EQ(one.predict(Collective::allreduce, "tree_pipelined", std::nullopt, 8e9).detail.rfind("textbook", 0), 0U);
  EXPECT_EQ(one.predict(Collective::allreduce, "nvls", std::nullopt, 8e9).detail, "NCCL nvls, Simple");
}

// NCCL scales Tree's bandwidth at medium sizes by its treeCorrectionFactor table (index
// floor(log2(bytes / 64)), 23 entries for Tree): Simple's factor is 0.5 from 128 KiB to 2 MiB
// (indexes 11-14), 0.9 at 256 MiB (index 22), and none from 512 MiB; LL's 0.4 at 256 KiB (12).
// Two DGX H100 nodes, the bandwidth term of nccl_estimate.
TEST(NcclModel, TreeBandwidthTakesNcclsCorrectionAtMediumSizes) {
  const auto m = topo::resolve_machine("cluster-h100");
  const GpuFabric f = build_fabric(m, topo::select_gpus(m, "16"), topo::P2P::on);
  const auto busbw = [&](NcclAlgo a, topo::Protocol p, double bytes) {
    const NcclEstimate e = nccl_estimate(f, Collective::allreduce, a, p, bytes);
    EXPECT_TRUE(e.available);
    return e.busbw_GBps;
  };
  const auto simple = [&](double bytes) { return busbw(NcclAlgo::tree, topo::Protocol::simple, bytes); };
  const double full = simple(1LL << 30);  // index 24: no correction
  EXPECT_GT(full, 0);
  EXPECT_DOUBLE_EQ(simple(512.0 * (1 << 20)), full);         // index 23: past Tree's 23 entries
  EXPECT_DOUBLE_EQ(simple(256.0 * (1 << 20)), 0.9 * full);   // index 22
  EXPECT_DOUBLE_EQ(simple(1 << 20), 0.5 * full);             // index 14
  EXPECT_DOUBLE_EQ(simple((1 << 20) + 4096.0), 0.5 * full);  // still index 14
  EXPECT_DOUBLE_EQ(simple(2 << 20), 0.6 * full);             // index 15
  EXPECT_DOUBLE_EQ(simple(32), full);                        // below 64 B: no correction
  const double ll = busbw(NcclAlgo::tree, topo::Protocol::ll, 1LL << 30);
  EXPECT_DOUBLE_EQ(busbw(NcclAlgo::tree, topo::Protocol::ll, 256 << 10), 0.4 * ll);  // index 12
  // NVLS-Tree on Hopper is not corrected (NCCL corrects it on Blackwell only).
  const double nvls_tree = busbw(NcclAlgo::nvls_tree, topo::Protocol::simple, 1LL << 30);
  EXPECT_DOUBLE_EQ(busbw(NcclAlgo::nvls_tree, topo::Protocol::simple, 1 << 20), nvls_tree);
}

// A network's "efficiency" scales what its NICs carry: a transport at half the NIC figure halves
// the ring's bound across nodes, and the bottleneck says so.
TEST(NcclModel, NetworkEfficiencyScalesTheNics) {
  auto m = topo::resolve_machine("superpod-a100");
  const Predictor full(m, topo::select_gpus(m, "16"), topo::P2P::on);
  m.network->efficiency = 0.5;
  const Predictor half(m, topo::select_gpus(m, "16"), topo::P2P::on);
  const auto ring = [](const Predictor& p) {
    return p.predict(Collective::allreduce, "ring", topo::Protocol::simple, 1e12).busbw_GBps;
  };
  EXPECT_NEAR(ring(half), 0.5 * ring(full), ring(full) * 0.01);
  EXPECT_NE(half.bottleneck().find("at 50% of their figure"), std::string::npos) << half.bottleneck();
}

TEST(NcclModel, AutoPicksTheFastest) {
  const auto m = topo::resolve_machine("dgx1");
  const Predictor pr(m, topo::select_gpus(m, "8"), topo::P2P::on);
  for (double n : {8.0, 65536.0, 1e9}) {
    const auto best = pr.predict(Collective::allreduce, "auto", std::nullopt, n);
    for (const auto& a : pr.algorithms(Collective::allreduce)) {
      if (a == "auto") continue;
      const auto x = pr.predict(Collective::allreduce, a, std::nullopt, n);
      if (x.time_s >= 0) {
        EXPECT_LE(best.time_s, x.time_s) << a << " at " << n;
      }
    }
  }
}

TEST(Predictor, UnknownAlgorithmIsAUsageError) {
  const auto m = topo::resolve_machine("dgx1");
  const Predictor pr(m, topo::select_gpus(m, "8"), topo::P2P::on);
  EXPECT_THROW((void)pr.predict(Collective::allreduce, "butterfly", std::nullopt, 1e6), Error);
}

TEST(Predictor, CalibratedCpuRingFollowsItsTables) {
  // A profile with constant per-byte rates: the ring prediction must equal the formula with
  // those rates (the segmenting of allreduce_ring.cpp included: 2 MB blocks in 4 segments of
  // at least 1 MiB, i.e. 2 pieces).
  Profile p;
  p.host = "test";
  for (double s : {8.0, 1e3, 1e6, 1e8}) {
    for (SizeTable* t : {&p.message_hot, &p.message_cold}) { t->bytes.push_back(s); t->seconds.push_back(1e-6 + s / 5e9); }
    for (SizeTable* t : {&p.reduce_hot, &p.reduce_cold}) { t->bytes.push_back(s); t->seconds.push_back(s / 8e9); }
    for (SizeTable* t : {&p.copy_hot, &p.copy_cold}) { t->bytes.push_back(s); t->seconds.push_back(s / 16e9); }
  }
  const Predictor pr(p, 2);
  const double n = 4e6;
  const CpuCosts c(p, 2 * n);
  // Blocks of n/2 = 2 MB go in at most 4 segments of at least 1 MiB: 2 segments of 1 MB.
  const double expected = collectives::ring_allreduce(n, 2, c, 1024.0 * 1024.0);
  EXPECT_NEAR(pr.predict(Collective::allreduce, "ring", std::nullopt, n).time_s, expected, expected * 1e-9);
}

TEST(Predictor, AMeasuredExchangeAndReduceStepPricesEveryReduceScatterStep) {
  // Without the measured step, a reduce-scatter step is its parts (an exchange, then a
  // reduction); with it, the ring's reduce-scatter and the Rabenseifner halving steps take the
  // table's time instead, and the allgather keeps the exchange's.
  Profile p;
  for (double s : {8.0, 1e3, 1e6, 1e8}) {
    for (SizeTable* t : {&p.message_hot, &p.message_cold}) { t->bytes.push_back(s); t->seconds.push_back(1e-6 + s / 5e9); }
    for (SizeTable* t : {&p.reduce_hot, &p.reduce_cold}) { t->bytes.push_back(s); t->seconds.push_back(s / 8e9); }
    for (SizeTable* t : {&p.copy_hot, &p.copy_cold}) { t->bytes.push_back(s); t->seconds.push_back(s / 16e9); }
  }
  const double n = 512e3, half = n / 2;
  {
    const CpuCosts c(p, 2 * n);
    EXPECT_NEAR(c.exchange_reduce(half), c.message(half) + c.reduce(half), 1e-15);
  }
  for (double s : {8.0, 1e3, 1e6, 1e8}) {
    for (SizeTable* t : {&p.exchange_reduce_hot, &p.exchange_reduce_cold}) {
      t->bytes.push_back(s);
      t->seconds.push_back(3e-6 + s / 2e9);  // slower than its parts: the other core's lines
    }
  }
  const CpuCosts c(p, 2 * n);
  const double step = p.exchange_reduce_hot.at(half);  // hot and cold alike: the blend is the table
  EXPECT_GT(step, c.message(half) + c.reduce(half));
  EXPECT_NEAR(c.exchange_reduce(half), step, 1e-12);
  const Predictor pr(p, 2);
  const double ring = pr.predict(Collective::allreduce, "ring", std::nullopt, n).time_s;
  EXPECT_NEAR(ring, step + c.message(half), 1e-12);
  const double raben = pr.predict(Collective::allreduce, "rabenseifner", std::nullopt, n).time_s;
  EXPECT_NEAR(raben, step + c.message(half), 1e-12);
  // In place the caller has just written the output (bench its input, training its gradients):
  // no peer holds its lines, and the step is its parts again.
  const double in_place = pr.predict(Collective::allreduce, "ring", std::nullopt, n, /*in_place=*/true).time_s;
  EXPECT_NEAR(in_place, c.message(half) + c.reduce(half) + c.message(half), 1e-12);
}

// Messages and reductions at 1 us + 5 GB/s, memcpy at a constant 16 GB/s (of bytes copied), hot
// and cold alike.
Profile copy_at_16GBps_profile() {
  Profile prof;
  for (double s : {8.0, 1e3, 1e6, 1e8}) {
    for (SizeTable* t : {&prof.message_hot, &prof.message_cold, &prof.reduce_hot, &prof.reduce_cold}) {
      t->bytes.push_back(s);
      t->seconds.push_back(1e-6 + s / 5e9);
    }
    for (SizeTable* t : {&prof.copy_hot, &prof.copy_cold}) {
      t->bytes.push_back(s);
      t->seconds.push_back(s / 16e9);
    }
  }
  return prof;
}

TEST(Predictor, MemoryLimitIsTheLeastTrafficOfAnAllreduceAtTheCopyRate) {
  // memcpy at a constant 16 GB/s (of bytes copied): an allreduce of n bytes on p ranks reads
  // (2p-1)/p n and writes n per rank, the traffic of a memcpy of (3p-1)/(2p) n.
  Profile prof = copy_at_16GBps_profile();
  const double n = 4e6;
  const auto two = Predictor(prof, 2).memory_limit_s(Collective::allreduce, n);
  ASSERT_TRUE(two.has_value());
  EXPECT_NEAR(*two, 1.25 * n / 16e9, 1e-12);
  const auto three = Predictor(prof, 3).memory_limit_s(Collective::allreduce, n);
  ASSERT_TRUE(three.has_value());
  EXPECT_NEAR(*three, (8.0 / 6.0) * n / 16e9, 1e-12);
  // The limit is below every algorithm's prediction: none of them moves less.
  for (const char* a : {"ring", "rabenseifner", "recursive_doubling"}) {
    EXPECT_LT(*two, Predictor(prof, 2).predict(Collective::allreduce, a, std::nullopt, n).time_s) << a;
  }
  EXPECT_FALSE(Predictor(prof, 2).memory_limit_s(Collective::allgather, n).has_value());
  const auto m = topo::resolve_machine("dgx1");
  EXPECT_FALSE(Predictor(m, topo::select_gpus(m, "8"), topo::P2P::on).memory_limit_s(Collective::allreduce, n).has_value());
}

TEST(Predictor, MemoryLimitIsAlsoBoundByWhatCrossesBetweenTheCores) {
  // memcpy at 16 GB/s; copying what the other core has just written at 4 GB/s plus 1 us: the
  // (p-1)/p of the vector that crosses in each half then takes longer than all the traffic at
  // memcpy's rate, and binds. Where crossing is fast, the traffic binds as before.
  Profile prof = copy_at_16GBps_profile();
  const double n = 1e6;
  const double traffic = 1.25 * n / 16e9;
  prof.peer_copy = {{4096, 1e5, 1e7}, {1e-6 + 4096 / 4e9, 1e-6 + 1e5 / 4e9, 1e-6 + 1e7 / 4e9}};
  const auto slow = Predictor(prof, 2).memory_limit_s(Collective::allreduce, n);
  ASSERT_TRUE(slow.has_value());
  const double crossing = 2 * prof.peer_copy.at(n / 2);
  EXPECT_GT(crossing, traffic);
  EXPECT_NEAR(*slow, crossing, 1e-12);
  EXPECT_NEAR(*Predictor(prof, 3).memory_limit_s(Collective::allreduce, n), 2 * prof.peer_copy.at(n * 2 / 3), 1e-12);
  prof.peer_copy = {{4096, 1e7}, {4096 / 400e9, 1e7 / 400e9}};
  EXPECT_NEAR(*Predictor(prof, 2).memory_limit_s(Collective::allreduce, n), traffic, 1e-12);
}

// auto for a query (what train and bench --algo auto ask): the fastest algorithm predicted for
// the call as the query describes it (in place, on shared buffers), passing over shm where the
// nodes hold different numbers of ranks.
TEST(Predictor, ChooseIsTheFastestThatCanRunThere) {
  Profile prof = copy_at_16GBps_profile();
  prof.peer_copy = {{4096, 1e7}, {4096 / 400e9, 1e7 / 400e9}};  // reading the peers' buffers in place is cheap
  const Predictor pr(prof, 2);
  for (const bool shared : {false, true}) {
    for (const bool uniform : {true, false}) {
      collectives::ChoiceQuery q{Collective::allreduce, 4e6};
      q.in_place = true;
      q.shared_buffers = shared;
      q.uniform_nodes = uniform;
      std::string best;
      double best_s = std::numeric_limits<double>::infinity();
      for (const auto& a : collectives::algorithm_names(Collective::allreduce)) {
        if (a == "shm" && !uniform) continue;
        const double t = pr.predict(Collective::allreduce, a, std::nullopt, q.bytes, true, shared).time_s;
        if (t < best_s) {
          best_s = t;
          best = a;
        }
      }
      const std::string chosen = pr.choose(q);
      EXPECT_EQ(chosen, best) << "shared " << shared << ", uniform " << uniform;
      if (shared && uniform) {
        EXPECT_EQ(chosen, "shm") << "the profile makes shm on shared buffers the fastest";
      }
      if (!uniform) {
        EXPECT_NE(chosen, "shm");
      }
    }
  }
  // predict's "auto" is the same choice, for one node.
  EXPECT_EQ(pr.predict(Collective::allreduce, "auto", std::nullopt, 4e6, true, true).algorithm, "shm");
}

}  // namespace
}  // namespace scalelab::model
