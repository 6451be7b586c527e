// The NCCL-like GPU model and the Predictor on catalog machines: values derived in the test from
// NCCL's formula time = latency + bytes / algbw with the constants of REFERENCE.md.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "model/formulas.h"
#include "model/predict.h"
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

TEST(NcclModel, P2POffIsSlowerOnDgx1) {
  const auto m = topo::resolve_machine("dgx1");
  const Predictor on(m, topo::select_gpus(m, "8"), topo::P2P::on);
  const Predictor off(m, topo::select_gpus(m, "8"), topo::P2P::off);
  const double n = 512e6;
  EXPECT_GT(on.predict(Collective::allreduce, "auto", std::nullopt, n).busbw_GBps,
            5 * off.predict(Collective::allreduce, "auto", std::nullopt, n).busbw_GBps);
  EXPECT_NE(off.bottleneck().find("QPI"), std::string::npos) << off.bottleneck();
}

TEST(NcclModel, AcrossNodesTheNicsBound) {
  const auto m = topo::resolve_machine("superpod-a100");
  const Predictor pr(m, topo::select_gpus(m, "64"), topo::P2P::on);
  const auto x = pr.predict(Collective::allreduce, "ring", topo::Protocol::simple, 8e9);
  // 8 HDR NICs per node at NCCL's 24 GB/s each, below the 240 GB/s NVSwitch ring.
  const double nics = 8 * 24.0;
  EXPECT_NEAR(x.busbw_GBps, nics, nics * 0.01);
  EXPECT_NE(pr.bottleneck().find("network"), std::string::npos);
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
  const double expected = ring_allreduce(n, 2, c, implementation_segments().ring_segment(n / 2));
  EXPECT_NEAR(pr.predict(Collective::allreduce, "ring", std::nullopt, n).time_s, expected, expected * 1e-9);
}

}  // namespace
}  // namespace scalelab::model
