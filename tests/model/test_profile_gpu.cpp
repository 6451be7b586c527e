// The calibration profile's `gpu` section: it survives a save and load, a profile from before it
// existed (schema_version 1) still loads as "not measured", a bad one is an input error, and the
// calibrated pinned-copy figure replaces the GPU-host links of "this" machine only, so predictions
// over those links follow it.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/results.h"
#include "model/predict.h"
#include "model/profile.h"
#include "topo/catalog.h"

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

Profile cpu_profile() {
  Profile p;
  p.host = "testhost";
  p.message_hot = p.message_cold = line(1e-4);
  p.reduce_hot = p.reduce_cold = line(2e-4);
  p.copy_hot = p.copy_cold = line(1e-4);
  return p;
}

GpuCopies h100_like() {
  GpuCopies g;
  g.measured = true;
  g.device = "NVIDIA H100 80GB HBM3";
  g.large_bytes = 256.0 * (1 << 20);
  g.small_bytes = 8;
  g.h2d_GBps = 35.5;
  g.d2h_GBps = 53.25;
  g.d2d_GBps = 2950;
  g.h2d_latency_us = 2.5;
  g.d2h_latency_us = 3.25;
  g.d2d_latency_us = 1.75;
  return g;
}

// Two GPUs on PCIe Gen4 x16 to one socket, no NVLink: what topo::detect_this_machine builds.
topo::Machine detected_pcie_pair() {
  topo::Machine m;
  m.name = "this";
  m.origin = "detected";
  topo::Device cpu;
  cpu.id = "cpu0";
  cpu.kind = topo::DeviceKind::cpu;
  m.devices.push_back(cpu);
  for (int i = 0; i < 2; ++i) {
    topo::Device g;
    g.id = "gpu" + std::to_string(i);
    g.kind = topo::DeviceKind::gpu;
    g.model = "NVIDIA H100 PCIe";
    m.devices.push_back(g);
    topo::Link l;
    l.a = i + 1;
    l.b = 0;
    l.spec = topo::LinkSpec{topo::LinkType::pcie, "4", 1, 16, {}};
    l.figures = *topo::figures_of(l.spec);
    m.links.push_back(l);
  }
  return m;
}

TEST(ProfileGpu, MeasuredFiguresRoundTrip) {
  Profile p = cpu_profile();
  p.gpu = h100_like();
  const Profile q = profile_from_json(to_json(p), "test");
  ASSERT_TRUE(q.gpu.measured);
  EXPECT_EQ(q.gpu.device, p.gpu.device);
  EXPECT_DOUBLE_EQ(q.gpu.large_bytes, p.gpu.large_bytes);
  EXPECT_DOUBLE_EQ(q.gpu.small_bytes, p.gpu.small_bytes);
  EXPECT_DOUBLE_EQ(q.gpu.h2d_GBps, p.gpu.h2d_GBps);
  EXPECT_DOUBLE_EQ(q.gpu.d2h_GBps, p.gpu.d2h_GBps);
  EXPECT_DOUBLE_EQ(q.gpu.d2d_GBps, p.gpu.d2d_GBps);
  EXPECT_DOUBLE_EQ(q.gpu.h2d_latency_us, p.gpu.h2d_latency_us);
  EXPECT_DOUBLE_EQ(q.gpu.d2h_latency_us, p.gpu.d2h_latency_us);
  EXPECT_DOUBLE_EQ(q.gpu.d2d_latency_us, p.gpu.d2d_latency_us);
  // The CPU part is untouched by the new section.
  EXPECT_DOUBLE_EQ(q.message_hot.at(4096), p.message_hot.at(4096));
}

TEST(ProfileGpu, TheReasonForNoFiguresRoundTrips) {
  Profile p = cpu_profile();
  p.gpu.reason = "bandwidth: no usable GPU (cudaGetDeviceCount: CUDA driver version is insufficient)";
  const Profile q = profile_from_json(to_json(p), "test");
  EXPECT_FALSE(q.gpu.measured);
  EXPECT_EQ(q.gpu.reason, p.gpu.reason);
}

TEST(ProfileGpu, VersionOneProfilesWithoutGpuStillLoad) {
  Profile p = cpu_profile();
  p.gpu = h100_like();
  nlohmann::json doc = make_envelope("calibration", 1, {"scalelab", "calibrate"});
  doc["profile"] = to_json(p);
  doc["profile"].erase("gpu");
  const Profile q = profile_from_json(doc, "old.json");
  EXPECT_FALSE(q.gpu.measured);
  EXPECT_NE(q.gpu.reason.find("run 'scalelab calibrate' again"), std::string::npos);
  EXPECT_DOUBLE_EQ(q.copy_cold.at(1 << 20), p.copy_cold.at(1 << 20));
}

TEST(ProfileGpu, BadFiguresAreAnInputErrorNamingTheFile) {
  Profile p = cpu_profile();
  p.gpu = h100_like();
  nlohmann::json j = to_json(p);
  j["gpu"]["d2h_GBps"] = 0;
  try {
    (void)profile_from_json(j, "bad.json");
    FAIL() << "a zero bandwidth was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::input);
    EXPECT_NE(std::string(e.what()).find("bad.json"), std::string::npos);
  }
  j["gpu"].erase("h2d_GBps");
  EXPECT_THROW((void)profile_from_json(j, "bad.json"), Error);
}

TEST(ProfileGpu, HostLinksTakeTheSlowerDirectionAndKeepNcclsRatio) {
  topo::Machine m = detected_pcie_pair();
  const GpuCopies g = h100_like();
  const topo::LinkFigures table = m.links[0].figures;
  EXPECT_EQ(apply_gpu_copies(m, g), 2);
  for (const auto& l : m.links) {
    EXPECT_DOUBLE_EQ(l.figures.peak_GBps, std::min(g.h2d_GBps, g.d2h_GBps));
    EXPECT_DOUBLE_EQ(l.figures.model_GBps, std::min(g.h2d_GBps, g.d2h_GBps) * table.model_GBps / table.peak_GBps);
    EXPECT_EQ(l.figures.latency_us, table.latency_us);
  }
  topo::Machine untouched = detected_pcie_pair();
  EXPECT_EQ(apply_gpu_copies(untouched, GpuCopies{}), 0);
  EXPECT_DOUBLE_EQ(untouched.links[0].figures.peak_GBps, table.peak_GBps);
}

// Writes a profile where $SCALELAB_PROFILE points for the duration of a test.
class ThisMachineProfile : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = (std::filesystem::temp_directory_path() / ("scalelab-profile-gpu-" + std::to_string(::getpid()) + ".json")).string();
    const char* old = std::getenv("SCALELAB_PROFILE");
    if (old != nullptr) old_ = old;
    ::setenv("SCALELAB_PROFILE", path_.c_str(), 1);
  }
  void TearDown() override {
    std::filesystem::remove(path_);
    if (old_.empty()) ::unsetenv("SCALELAB_PROFILE");
    else ::setenv("SCALELAB_PROFILE", old_.c_str(), 1);
  }
  void save(const Profile& p) {
    nlohmann::json doc = make_envelope("calibration", 2, {"scalelab", "calibrate"});
    doc["profile"] = to_json(p);
    write_json_file(path_, doc);
  }
  std::string path_, old_;
};

TEST_F(ThisMachineProfile, OnlyTheDetectedMachineIsCalibrated) {
  Profile p = cpu_profile();
  p.gpu = h100_like();
  p.gpu.h2d_GBps = 5;  // far below the Gen4 table, so the change shows
  save(p);
  const topo::Machine m = with_calibrated_host_links(detected_pcie_pair());
  EXPECT_DOUBLE_EQ(m.links[0].figures.peak_GBps, 5);
  ASSERT_FALSE(m.sources.empty());
  EXPECT_NE(m.sources.back().find("scalelab calibrate"), std::string::npos);
  const topo::Machine dgx = topo::resolve_machine("dgx1");
  EXPECT_EQ(with_calibrated_host_links(dgx).sources, dgx.sources);
}

TEST_F(ThisMachineProfile, PredictionsOverHostLinksFollowTheCalibratedFigure) {
  const topo::Machine m = detected_pcie_pair();
  const auto sel = topo::select_gpus(m, "2");
  const double n = 1e9;
  // No profile yet: the PCIe Gen4 table.
  const Predictor table(m, sel, topo::P2P::off);
  const double bus_table = table.predict(collectives::Collective::allreduce, "ring", std::nullopt, n).busbw_GBps;
  Profile p = cpu_profile();
  p.gpu = h100_like();
  p.gpu.h2d_GBps = 5;
  save(p);
  const Predictor calibrated(m, sel, topo::P2P::off);
  const double bus = calibrated.predict(collectives::Collective::allreduce, "ring", std::nullopt, n).busbw_GBps;
  const auto gen4 = *topo::figures_of(topo::LinkSpec{topo::LinkType::pcie, "4", 1, 16, {}});
  // The ring crosses the host links: its bus bandwidth cannot beat their calibrated model figure.
  EXPECT_LE(bus, 5 * gen4.model_GBps / gen4.peak_GBps * (1 + 1e-9));
  EXPECT_LT(bus, bus_table);
}

}  // namespace
}  // namespace scalelab::model
