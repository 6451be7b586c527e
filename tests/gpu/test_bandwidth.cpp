// The device bandwidth test (gpu/bandwidth.h) and its table and JSON (gpu/bandwidth_table.h).
// The host side runs everywhere: GB/s from bytes and time (device copies counted twice), the
// table's rows and 32 MiB line, the JSON record, bad options. The copies themselves need a GPU and
// skip with the CUDA error where there is none; without one, the error the command shows is
// checked instead.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "no_device_reason.h"
#include "core/error.h"
#include "gpu/bandwidth.h"
#include "gpu/bandwidth_table.h"

namespace scalelab::gpu {
namespace {

using test_support::no_device_reason;

CopyPoint point(CopyKind k, HostMemory m, std::uint64_t bytes, double seconds) {
  return {k, m, bytes, seconds, seconds * 0.9, copy_GBps(k, static_cast<double>(bytes), seconds)};
}

TEST(BandwidthFigures, DeviceCopiesCountBytesReadAndWritten) {
  EXPECT_DOUBLE_EQ(copy_GBps(CopyKind::h2d, 1e9, 0.5), 2.0);
  EXPECT_DOUBLE_EQ(copy_GBps(CopyKind::d2h, 1e9, 0.5), 2.0);
  EXPECT_DOUBLE_EQ(copy_GBps(CopyKind::d2d, 1e9, 0.5), 4.0);
  EXPECT_DOUBLE_EQ(counted_bytes(CopyKind::d2d, 32 << 20), 2.0 * (32 << 20));
  EXPECT_DOUBLE_EQ(copy_GBps(CopyKind::h2d, 1e9, 0.0), 0.0);
}

TEST(BandwidthTable, RowsSummaryAndJsonCarryTheMeasuredFigures) {
  BandwidthOptions o;
  o.pageable = false;  // columns: H2D pinned, D2H pinned, D2D
  o.peers = true;
  BandwidthReport r;
  r.device = {0, "Test GPU", "0000:01:00.0", "9.0", 80.0, 1};
  r.iters = o.iters;
  r.repeats = o.repeats;
  r.warmup = o.warmup;
  r.peer_note = "peer copies need two GPUs; this machine shows 1";
  const std::uint64_t big = kClassicBytes;
  r.points = {point(CopyKind::h2d, HostMemory::pinned, big, big / 25e9),
              point(CopyKind::d2h, HostMemory::pinned, big, big / 50e9),
              point(CopyKind::d2d, HostMemory::none, big, 2.0 * big / 2500e9)};
  std::ostringstream out;
  BandwidthTable t(out, o);
  t.preamble(r.device);
  t.header();
  t.row(big, r.points);
  t.summary(r);
  const std::string text = out.str();
  EXPECT_NE(text.find("Test GPU"), std::string::npos);
  EXPECT_NE(text.find("read AND written"), std::string::npos);
  EXPECT_NE(text.find("H2D pinned"), std::string::npos);
  EXPECT_EQ(text.find("pageable"), std::string::npos);
  // The data row: size, then time and GB/s per kind.
  std::istringstream rows(text);
  std::string line, row;
  while (std::getline(rows, line)) {
    if (!line.empty() && line[0] != '#') row = line;
  }
  std::istringstream cells(row);
  std::string size, t1, g1, t2, g2, t3, g3;
  cells >> size >> t1 >> g1 >> t2 >> g2 >> t3 >> g3;
  EXPECT_EQ(size, std::to_string(big));
  EXPECT_NEAR(std::stod(g1), 25.0, 0.006);
  EXPECT_NEAR(std::stod(g2), 50.0, 0.006);
  EXPECT_NEAR(std::stod(g3), 2500.0, 0.006);
  EXPECT_NEAR(std::stod(t1), big / 25e9 * 1e6, 0.06);
  EXPECT_NE(text.find("at 32 MiB (bandwidthTest's size): H2D pinned 25.0 GB/s, D2H pinned 50.0 GB/s, D2D (read+write) 2500.0 GB/s"),
            std::string::npos);
  EXPECT_NE(text.find("peer copies: peer copies need two GPUs; this machine shows 1"), std::string::npos);

  const nlohmann::json j = to_json(r);
  ASSERT_EQ(j["points"].size(), 3u);
  EXPECT_EQ(j["points"][2]["kind"], "D2D");
  EXPECT_EQ(j["points"][2]["host_memory"], "device");
  EXPECT_DOUBLE_EQ(j["points"][2]["counted_bytes"].get<double>(), 2.0 * big);
  EXPECT_DOUBLE_EQ(j["points"][0]["GBps"].get<double>(), r.points[0].GBps);
  EXPECT_DOUBLE_EQ(j["points"][0]["time_us"].get<double>(), r.points[0].seconds * 1e6);
  EXPECT_EQ(j["device"]["name"], "Test GPU");
  EXPECT_EQ(j["protocol"]["repeats"], o.repeats);
  EXPECT_EQ(j["peer_note"], r.peer_note);
}

TEST(BandwidthTable, PeerMatricesShowNaWherePeerAccessIsImpossible) {
  BandwidthOptions o;
  o.peers = true;
  BandwidthReport r;
  r.device = {0, "Test GPU", "0000:01:00.0", "9.0", 80.0, 2};
  r.peers = {{0, 1, true, 12.5, 48.25, 16.0, 1.5}, {1, 0, false, 11.0, 0.0, 17.0, 0.0}};
  std::ostringstream out;
  BandwidthTable(out, o).summary(r);
  const std::string text = out.str();
  EXPECT_NE(text.find("P2P off"), std::string::npos);
  EXPECT_NE(text.find("48.25"), std::string::npos);
  EXPECT_NE(text.find("n/a"), std::string::npos);
  const nlohmann::json j = to_json(r);
  EXPECT_TRUE(j["peers"][1]["p2p_on_GBps"].is_null());
  EXPECT_DOUBLE_EQ(j["peers"][0]["p2p_on_GBps"].get<double>(), 48.25);
}

TEST(BandwidthOptionsCheck, EmptyOrUnorderedSizesAreUsageErrors) {
  BandwidthOptions o;
  try {
    (void)run_bandwidth_test(o);
    FAIL() << "no sizes accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::usage);
  }
  o.sizes = {4096, 1024};
  EXPECT_THROW((void)run_bandwidth_test(o), Error);
}

TEST(BandwidthDevice, WithoutAGpuTheErrorNamesTheCudaCause) {
  const std::string reason = no_device_reason();
  if (reason.empty()) GTEST_SKIP() << "a GPU is usable here; this test covers machines without one";
  try {
    (void)open_device(0);
    FAIL() << "open_device succeeded without a usable GPU";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::runtime);
    const std::string what = e.what();
    EXPECT_EQ(what.find('\n'), std::string::npos);
    int count = 0;
    const cudaError_t rc = cudaGetDeviceCount(&count);
    if (rc != cudaSuccess) {
      EXPECT_NE(what.find(cudaGetErrorString(rc)), std::string::npos) << what;
    }
  }
}

TEST(BandwidthDevice, CopiesAreMeasuredAndChecked) {
  const std::string reason = no_device_reason();
  if (!reason.empty()) GTEST_SKIP() << "no usable CUDA device: " << reason;
  BandwidthOptions o;
  o.sizes = {1 << 10, 1 << 20, 8 << 20};
  o.iters = 4;
  o.repeats = 3;
  int rows = 0;
  o.on_size = [&](std::uint64_t, const std::vector<CopyPoint>& points) {
    EXPECT_EQ(points.size(), 5u);
    ++rows;
  };
  const BandwidthReport r = run_bandwidth_test(o);  // throws if any copy came back wrong
  EXPECT_EQ(rows, 3);
  ASSERT_EQ(r.points.size(), 15u);
  for (const auto& p : r.points) {
    EXPECT_GT(p.seconds, 0);
    EXPECT_LE(p.min_seconds, p.seconds);
    EXPECT_DOUBLE_EQ(p.GBps, copy_GBps(p.kind, static_cast<double>(p.bytes), p.seconds));
  }
  // A larger copy moves more bytes per second than a 1 KiB one, whose time is mostly latency.
  for (const CopyKind k : {CopyKind::h2d, CopyKind::d2h}) {
    EXPECT_GT(find_point(r, k, HostMemory::pinned, 8 << 20)->GBps, find_point(r, k, HostMemory::pinned, 1 << 10)->GBps);
  }
  EXPECT_EQ(r.peers.empty(), true);
}

TEST(BandwidthDevice, PeerCopiesCoverEveryOrderedPairOrSayTheyNeedTwoGpus) {
  const std::string reason = no_device_reason();
  if (!reason.empty()) GTEST_SKIP() << "no usable CUDA device: " << reason;
  BandwidthOptions o;
  o.sizes = {4096};
  o.pageable = false;
  o.peers = true;
  o.peer_bytes = 1 << 20;
  o.iters = 2;
  o.repeats = 3;
  const BandwidthReport r = run_bandwidth_test(o);
  const int n = r.device.device_count;
  if (n < 2) {
    EXPECT_TRUE(r.peers.empty());
    EXPECT_EQ(r.peer_note, "peer copies need two GPUs; this machine shows " + std::to_string(n));
    return;
  }
  ASSERT_EQ(static_cast<int>(r.peers.size()), n * (n - 1));
  for (const auto& p : r.peers) {
    EXPECT_NE(p.src, p.dst);
    EXPECT_GT(p.off_GBps, 0);
    EXPECT_GT(p.off_latency_us, 0);
    EXPECT_EQ(p.on_GBps > 0, p.can_access);
  }
}

TEST(BandwidthDevice, ADeviceThatDoesNotExistIsAUsageError) {
  const std::string reason = no_device_reason();
  if (!reason.empty()) GTEST_SKIP() << "no usable CUDA device: " << reason;
  try {
    (void)open_device(4096);
    FAIL() << "device 4096 accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::usage);
    EXPECT_EQ(e.parameter(), "cuda_device");  // the CLI names it --cuda-device (apps/scalelab/flag_names.cpp)
    EXPECT_NE(std::string(e.what()).find("4096: no such GPU"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace scalelab::gpu
