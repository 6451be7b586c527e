// "This machine": the nn engine's layers timed per kind make a CPU device whose roofline gives
// back the measured rates, the calibration profile keeps them (and older profiles still load, as
// "not measured"), and a profile without them says to run `scalelab calibrate`. Several ranks on
// the node are priced at the rates timed with every rank computing at once, where measured.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/limits.h"
#include "core/overlap_rule.h"
#include "model/profile.h"
#include "nn/compute.h"
#include "sim/cpu_rates.h"
#include "nn/model.h"
#include "sim/scaling.h"
#include "sim/workload.h"

namespace scalelab::sim {
namespace {

constexpr std::size_t idx(LayerKind k) { return static_cast<std::size_t>(k); }

TEST(CpuRates, MeasuredOnOneThreadWithPositiveRatesAndTheThreadCountRestored) {
  nn::set_compute_threads(2);
  const CpuRates r = measure_cpu_rates({.quick = true, .batch = 4});
  EXPECT_EQ(nn::compute_threads(), 2);
  nn::set_compute_threads(1);
  EXPECT_EQ(r.threads, 1);
  EXPECT_EQ(r.batch, 4);
  EXPECT_FALSE(r.blas.empty());
  for (std::size_t k = 0; k < kLayerKinds; ++k) EXPECT_GT(r.rate[k], 0) << k;
  for (LayerKind k : {LayerKind::conv, LayerKind::matmul, LayerKind::elementwise, LayerKind::pool}) EXPECT_TRUE(r.measured[idx(k)]);
  // Kinds no lab model has borrow a measured kind's rate; the resnet's batch norms are timed.
  EXPECT_FALSE(r.measured[idx(LayerKind::attention)]);
  EXPECT_DOUBLE_EQ(r.rate[idx(LayerKind::attention)], r.rate[idx(LayerKind::matmul)]);
  EXPECT_TRUE(r.measured[idx(LayerKind::norm)]);
}

// Every convolution and dense layer of every lab model finds its own shape among the measured
// ones (a convolution's bias makes its m up to 1/k larger), and every memory-bound kind the lab
// models have is measured at several sizes.
TEST(CpuRates, EveryLabModelsProductAndMemoryLayerIsMeasured) {
  const CpuRates r = measure_cpu_rates({.quick = true, .batch = 4});
  const DeviceSpec d = cpu_device(r);
  for (const ShapeRate& x : r.shapes) EXPECT_GT(x.flops_per_s, 0);
  for (const TrafficRate& x : r.traffic) EXPECT_GT(x.bytes_per_s, 0);
  for (const std::string& name : nn::model_names()) {
    const Workload w = workload_from_model(*nn::make_model(name, nn::Shape{1, 28, 28}, 10, 1));
    for (const WorkloadLayer& l : w.layers) {
      if (const auto shape = gemm_shape(l, 4)) {
        const ShapeRate* near = d.nearest_shape(l.kind, *shape);
        ASSERT_NE(near, nullptr) << name << " " << l.name;
        EXPECT_LT(std::abs(std::log(shape->m / near->shape.m)), 0.12) << name << " " << l.name;
        EXPECT_LT(std::abs(std::log(shape->n / near->shape.n)), 0.12) << name << " " << l.name;
        EXPECT_DOUBLE_EQ(shape->k, near->shape.k) << name << " " << l.name;
        continue;
      }
      const auto sizes = std::count_if(r.traffic.begin(), r.traffic.end(), [&](const auto& t) { return t.kind == l.kind; });
      EXPECT_GE(sizes, 4) << name << " " << l.name << " (" << name_of(l.kind) << ")";
    }
  }
  // The cnn's fused run (its two convolutions and its pool) is timed at two batches, and its
  // workload finds it at its first layer.
  const Workload cnn = workload_from_model(*nn::make_model("cnn", nn::Shape{1, 28, 28}, 10, 1));
  ASSERT_EQ(r.fused.size(), 2u);
  for (const FusedRate& f : r.fused) EXPECT_GT(f.seconds_per_sample, 0);
  EXPECT_EQ(r.fused[0].batch, 4);
  EXPECT_EQ(r.fused[1].batch, 16);
  double per_sample = 0;
  EXPECT_EQ(d.fused_run_at(cnn.layers, 0, 4, per_sample), 3u);
  EXPECT_DOUBLE_EQ(per_sample, r.fused[0].seconds_per_sample);
  EXPECT_EQ(d.fused_run_at(cnn.layers, 1, 4, per_sample), 0u);
}

CpuRates made_up() {
  CpuRates r;
  r.blas = "test";
  r.batch = 32;
  r.rate[idx(LayerKind::conv)] = r.rate[idx(LayerKind::attention)] = 60e9;
  r.rate[idx(LayerKind::matmul)] = 90e9;
  r.rate[idx(LayerKind::elementwise)] = r.rate[idx(LayerKind::norm)] = r.rate[idx(LayerKind::embedding)] = 12e9;
  r.rate[idx(LayerKind::pool)] = 6e9;
  return r;
}

TEST(CpuDevice, TheRooflineGivesBackEachKindsMeasuredRate) {
  const CpuRates r = made_up();
  const DeviceSpec d = cpu_device(r);
  EXPECT_EQ(d.kind, "cpu");
  EXPECT_GT(d.memory_GiB, 0);  // the host's memory
  EXPECT_DOUBLE_EQ(d.fp32_tflops, 90e9 * 1e-12);  // the fastest compute-bound kind
  EXPECT_DOUBLE_EQ(d.mem_bw_GBps, 12.0);          // the fastest memory-bound kind
  EXPECT_DOUBLE_EQ(d.of(LayerKind::matmul).compute, 1.0);
  EXPECT_DOUBLE_EQ(d.of(LayerKind::elementwise).memory, 1.0);
  // A compute-bound layer of F FLOPs takes F / its rate; a memory-bound one of B bytes B / its rate.
  const double flops = 3e9, bytes = 6e8;
  EXPECT_NEAR(d.layer_seconds(LayerKind::conv, flops, 0, Precision::fp32), flops / 60e9, 1e-15);
  EXPECT_NEAR(d.layer_seconds(LayerKind::matmul, flops, 0, Precision::fp32), flops / 90e9, 1e-15);
  EXPECT_NEAR(d.layer_seconds(LayerKind::pool, 0, bytes, Precision::fp32), bytes / 6e9, 1e-15);
  EXPECT_NEAR(d.layer_seconds(LayerKind::elementwise, 0, bytes, Precision::fp32), bytes / 12e9, 1e-15);
  // No tensor units: amp prices like fp32.
  EXPECT_DOUBLE_EQ(d.layer_seconds(LayerKind::conv, flops, 0, Precision::amp), d.layer_seconds(LayerKind::conv, flops, 0, Precision::fp32));
}

// The smallest profile profile_from_json accepts: two rows per table.
model::Profile minimal_profile() {
  model::Profile p;
  p.cpu_model = "Test CPU";
  for (model::SizeTable* t : {&p.message_hot, &p.message_cold, &p.reduce_hot, &p.reduce_cold, &p.copy_hot, &p.copy_cold}) {
    t->bytes = {1024, 4096};
    t->seconds = {1e-6, 2e-6};
  }
  return p;
}

// A layer of a measured kind is priced at the nearest measured shape; the memory side of a kind
// measured at several sizes follows the size, log-log between the points and flat beyond them.
TEST(CpuDevice, ProductsTakeTheNearestShapesRateAndTrafficItsSizesRate) {
  DeviceSpec d = cpu_device(made_up());
  d.shape_rates = {{LayerKind::conv, {16, 784, 144}, 100e9}, {LayerKind::conv, {64, 576, 288}, 200e9},
                   {LayerKind::matmul, {128, 256, 784}, 220e9}};
  d.traffic_rates = {{LayerKind::elementwise, 1e6, 100e9}, {LayerKind::elementwise, 1e8, 10e9}};
  const double flops = 1e9;
  EXPECT_DOUBLE_EQ(d.layer_seconds(LayerKind::conv, flops, 0, Precision::fp32, GemmShape{16, 800, 150}), flops / 100e9);
  EXPECT_DOUBLE_EQ(d.layer_seconds(LayerKind::conv, flops, 0, Precision::fp32, GemmShape{60, 500, 300}), flops / 200e9);
  EXPECT_DOUBLE_EQ(d.layer_seconds(LayerKind::matmul, flops, 0, Precision::fp32, GemmShape{32, 10, 64}), flops / 220e9);
  // Without a shape, or of a kind with no measured shape: the kind's own rate.
  EXPECT_DOUBLE_EQ(d.layer_seconds(LayerKind::conv, flops, 0, Precision::fp32), flops / 60e9);
  EXPECT_EQ(d.nearest_shape(LayerKind::attention, GemmShape{1, 1, 1}), nullptr);
  EXPECT_NEAR(d.memory_Bps(LayerKind::elementwise, 1e5), 100e9, 1e3);
  EXPECT_NEAR(d.memory_Bps(LayerKind::elementwise, 1e9), 10e9, 1e3);
  EXPECT_NEAR(d.memory_Bps(LayerKind::elementwise, 1e7), std::sqrt(100e9 * 10e9), 1e3);
  EXPECT_DOUBLE_EQ(d.memory_Bps(LayerKind::pool, 1e7), 6e9);  // no table: the kind's rate
  EXPECT_NEAR(d.layer_seconds(LayerKind::elementwise, 0, 1e7, Precision::fp32), 1e7 / std::sqrt(100e9 * 10e9), 1e-12);
  // Two layers of one size count as one point at their rates' geometric mean.
  d.traffic_rates.push_back({LayerKind::elementwise, 1e6, 25e9});
  EXPECT_NEAR(d.memory_Bps(LayerKind::elementwise, 1e5), 50e9, 1e3);
}

TEST(ProfileCompute, TheComputeSectionRoundTrips) {
  model::Profile p = minimal_profile();
  p.compute = to_compute_rates(made_up());
  const model::Profile q = model::profile_from_json(model::to_json(p), "test profile");
  ASSERT_TRUE(q.compute.measured);
  EXPECT_EQ(q.compute.blas, "test");
  EXPECT_EQ(q.compute.batch, 32);
  EXPECT_DOUBLE_EQ(q.compute.conv_flops_per_s, 60e9);
  EXPECT_DOUBLE_EQ(q.compute.matmul_flops_per_s, 90e9);
  EXPECT_DOUBLE_EQ(q.compute.elementwise_bytes_per_s, 12e9);
  EXPECT_DOUBLE_EQ(q.compute.pool_bytes_per_s, 6e9);
  EXPECT_TRUE(q.compute.fused.empty());
  const DeviceSpec d = device_from_profile(q, "test profile");
  EXPECT_EQ(d.kind, "cpu");
  EXPECT_NE(d.title.find("Test CPU"), std::string::npos);
  EXPECT_NEAR(d.layer_seconds(LayerKind::conv, 6e9, 0, Precision::fp32), 0.1, 1e-12);
  // Without shapes, traffic or a norm rate (a profile from before them): the kinds' rates.
  EXPECT_TRUE(q.compute.shapes.empty());
  EXPECT_TRUE(q.compute.traffic.empty());
  EXPECT_DOUBLE_EQ(q.compute.norm_bytes_per_s, 0);
  EXPECT_NEAR(d.layer_seconds(LayerKind::norm, 0, 1.2e9, Precision::fp32), 0.1, 1e-12);  // elementwise's 12 GB/s
}

// A convolution measured at two batches is priced at the trained batch's rate: log-log between
// them, flat beyond; a query without a batch, or a shape measured at one, takes the nearest entry.
TEST(CpuDevice, AConvolutionsRateFollowsTheBatchBetweenItsMeasuredBatches) {
  DeviceSpec d = cpu_device(made_up());
  d.shape_rates = {{LayerKind::conv, {16, 784, 144, 32}, 100e9}, {LayerKind::conv, {16, 784, 144, 128}, 50e9},
                   {LayerKind::conv, {64, 576, 288, 32}, 200e9}};
  EXPECT_NEAR(d.shape_flops_per_s(LayerKind::conv, {16, 784, 144, 64}), std::sqrt(100e9 * 50e9), 1e3);
  EXPECT_DOUBLE_EQ(d.shape_flops_per_s(LayerKind::conv, {16, 784, 144, 8}), 100e9);
  EXPECT_DOUBLE_EQ(d.shape_flops_per_s(LayerKind::conv, {16, 784, 144, 1024}), 50e9);
  EXPECT_DOUBLE_EQ(d.shape_flops_per_s(LayerKind::conv, {16, 800, 150, 128}), 50e9);  // nearest shape, its batch
  EXPECT_DOUBLE_EQ(d.shape_flops_per_s(LayerKind::conv, {64, 576, 288, 128}), 200e9);  // one batch measured
  EXPECT_DOUBLE_EQ(d.shape_flops_per_s(LayerKind::conv, {16, 784, 144}), 100e9);  // no batch: the nearest entry
  EXPECT_DOUBLE_EQ(d.shape_flops_per_s(LayerKind::matmul, {16, 784, 144, 64}), 0);  // no matmul measured
  const double flops = 1e9;
  EXPECT_NEAR(d.layer_seconds(LayerKind::conv, flops, 0, Precision::fp32, GemmShape{16, 784, 144, 64}),
              flops / std::sqrt(100e9 * 50e9), 1e-15);
}

TEST(ProfileCompute, ShapesTrafficAndTheNormRateRoundTrip) {
  model::Profile p = minimal_profile();
  CpuRates r = made_up();
  r.rate[idx(LayerKind::norm)] = 3e9;
  r.measured[idx(LayerKind::norm)] = true;
  r.shapes = {{LayerKind::conv, {16, 784, 144, 32}, 100e9}, {LayerKind::matmul, {128, 256, 784}, 220e9}};
  r.traffic = {{LayerKind::norm, 2e6, 4e9}, {LayerKind::pool, 1e6, 50e9}};
  WorkloadLayer conv{"c", LayerKind::conv, 389376, 320, 784, 21632, ""};
  WorkloadLayer pool{"p", LayerKind::pool, 0, 0, 21632, 5408, ""};
  r.fused = {{{conv, pool}, 32, 3.5e-4}};
  p.compute = to_compute_rates(r);
  const model::Profile q = model::profile_from_json(model::to_json(p), "test profile");
  EXPECT_DOUBLE_EQ(q.compute.norm_bytes_per_s, 3e9);
  ASSERT_EQ(q.compute.shapes.size(), 2u);
  EXPECT_DOUBLE_EQ(q.compute.shapes[0].batch, 32);
  EXPECT_DOUBLE_EQ(q.compute.shapes[1].batch, 0);  // not recorded, as in older profiles
  EXPECT_EQ(q.compute.shapes[1].kind, "matmul");
  EXPECT_DOUBLE_EQ(q.compute.shapes[1].m, 128);
  EXPECT_DOUBLE_EQ(q.compute.shapes[1].flops_per_s, 220e9);
  ASSERT_EQ(q.compute.traffic.size(), 2u);
  EXPECT_EQ(q.compute.traffic[0].kind, "norm");
  EXPECT_DOUBLE_EQ(q.compute.traffic[0].bytes_per_s, 4e9);
  ASSERT_EQ(q.compute.fused.size(), 1u);
  ASSERT_EQ(q.compute.fused[0].layers.size(), 2u);
  EXPECT_EQ(q.compute.fused[0].layers[1].kind, "pool");
  EXPECT_DOUBLE_EQ(q.compute.fused[0].layers[0].forward_flops, 389376);
  EXPECT_DOUBLE_EQ(q.compute.fused[0].seconds_per_image, 3.5e-4);
  const DeviceSpec d = device_from_profile(q, "test profile");
  double per_sample = 0;
  EXPECT_EQ(d.fused_run_at({conv, pool}, 0, 64, per_sample), 2u);
  EXPECT_DOUBLE_EQ(per_sample, 3.5e-4);
  EXPECT_DOUBLE_EQ(d.layer_seconds(LayerKind::matmul, 2.2e9, 0, Precision::fp32, GemmShape{128, 256, 784}), 0.01);
  EXPECT_NEAR(d.memory_Bps(LayerKind::norm, 2e6), 4e9, 1e3);
  EXPECT_DOUBLE_EQ(d.memory_Bps(LayerKind::elementwise, 2e6), 12e9);  // no table for it
}

TEST(ProfileCompute, AnOlderProfileLoadsAsNotMeasuredAndTheSimulatorSaysToCalibrate) {
  nlohmann::json j = model::to_json(minimal_profile());
  j.erase("compute");  // schema_version 3 and older
  const model::Profile q = model::profile_from_json(j, "old.json");
  EXPECT_FALSE(q.compute.measured);
  EXPECT_NE(q.compute.reason.find("predates"), std::string::npos);
  try {
    (void)device_from_profile(q, "old.json");
    FAIL() << "no error";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_EQ(e.kind(), ErrorKind::input);
    EXPECT_NE(what.find("old.json"), std::string::npos) << what;
    EXPECT_NE(what.find("run 'scalelab calibrate'"), std::string::npos) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
  }
}

// made_up() with its memory-bound kinds at half the rate: what two ranks sharing the memory get.
CpuRates made_up_shared() {
  CpuRates r = made_up();
  for (LayerKind k : {LayerKind::elementwise, LayerKind::norm, LayerKind::embedding, LayerKind::pool}) r.rate[idx(k)] /= 2;
  return r;
}

TEST(ProfileCompute, TheSharedRatesRoundTripAndAnOlderProfileFallsBackToTheSoloOnes) {
  model::Profile p = minimal_profile();
  p.compute = to_compute_rates(made_up());
  p.compute_shared = to_compute_rates(made_up_shared());
  const model::Profile q = model::profile_from_json(model::to_json(p), "test profile");
  ASSERT_TRUE(q.compute_shared.measured);
  EXPECT_DOUBLE_EQ(q.compute_shared.pool_bytes_per_s, 3e9);
  const DeviceSpec solo = device_from_profile(q, "test profile"), shared = device_from_profile(q, "test profile", true);
  EXPECT_NEAR(shared.layer_seconds(LayerKind::pool, 0, 3e9, Precision::fp32), 1.0, 1e-12);
  EXPECT_NEAR(solo.layer_seconds(LayerKind::pool, 0, 3e9, Precision::fp32), 0.5, 1e-12);
  EXPECT_NE(shared.title.find("every rank of the node computing"), std::string::npos) << shared.title;
  nlohmann::json j = model::to_json(p);
  j.erase("compute_shared");  // made before it was measured
  const model::Profile old = model::profile_from_json(j, "old.json");
  EXPECT_FALSE(old.compute_shared.measured);
  EXPECT_NE(old.compute_shared.reason.find("predates"), std::string::npos);
  EXPECT_NEAR(device_from_profile(old, "old.json", true).layer_seconds(LayerKind::pool, 0, 3e9, Precision::fp32), 0.5, 1e-12);
  j["compute_shared"] = model::to_json(p)["compute_shared"];
  j["compute_shared"]["pool_GBps"] = 0;
  try {
    (void)model::profile_from_json(j, "bad.json");
    FAIL() << "accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("compute_shared.pool_GBps"), std::string::npos) << e.what();
  }
}

// Side by side a rank is no faster than alone: a shared rate that came out faster (the noise of
// two timings) is the solo one, kind by kind and entry by entry, fused runs included.
TEST(ProfileCompute, ASharedRateIsNeverFasterThanTheSoloOne) {
  model::Profile p = minimal_profile();
  CpuRates solo = made_up();
  WorkloadLayer conv{"c", LayerKind::conv, 389376, 320, 784, 21632, ""};
  solo.shapes = {{LayerKind::conv, {16, 784, 144, 32}, 100e9}};
  solo.fused = {{{conv}, 32, 3.5e-4}};
  CpuRates side = solo;
  side.rate[idx(LayerKind::pool)] *= 1.02;      // faster beside another rank: noise
  side.rate[idx(LayerKind::elementwise)] /= 2;  // slower: shared memory, kept
  side.shapes[0].flops_per_s = 103e9;
  side.fused[0].seconds_per_sample = 3.4e-4;
  p.compute = to_compute_rates(solo);
  p.compute_shared = to_compute_rates(side);
  const DeviceSpec d = device_from_profile(p, "test profile", true);
  EXPECT_NEAR(d.memory_Bps(LayerKind::pool, 1e6), 6e9, 1e3);
  EXPECT_NEAR(d.memory_Bps(LayerKind::elementwise, 1e6), 6e9, 1e3);
  EXPECT_DOUBLE_EQ(d.shape_flops_per_s(LayerKind::conv, {16, 784, 144, 32}), 100e9);
  double per_sample = 0;
  ASSERT_EQ(d.fused_run_at({conv}, 0, 32, per_sample), 1u);
  EXPECT_DOUBLE_EQ(per_sample, 3.5e-4);
}

TEST(ThisMachine, SeveralRanksComputeAtTheSharedRatesOneAtTheSoloOnes) {
  model::Profile p = minimal_profile();
  p.compute = to_compute_rates(made_up());
  const std::string path = testing::TempDir() + "scalelab-shared-" + std::to_string(getpid()) + ".json";
  auto run = [&] {
    std::ofstream(path) << model::to_json(p).dump();
    ScalingRequest q;
    q.workload = "cnn";
    q.machine = "this";
    q.profile = path;
    q.counts = {1, 2};
    return simulate_scaling(q);
  };
  const ScalingResult alone = run();
  ASSERT_EQ(alone.rows.size(), 2u);
  EXPECT_DOUBLE_EQ(alone.rows[1].step.parts.compute_s(), alone.rows[0].step.parts.compute_s());
  p.compute_shared = to_compute_rates(made_up_shared());
  const ScalingResult shared = run();
  std::remove(path.c_str());
  EXPECT_DOUBLE_EQ(shared.rows[0].step.parts.compute_s(), alone.rows[0].step.parts.compute_s());
  EXPECT_GT(shared.rows[1].step.parts.compute_s(), shared.rows[0].step.parts.compute_s());
  EXPECT_LT(shared.rows[1].scaling_efficiency, alone.rows[1].scaling_efficiency);
  EXPECT_NE(shared.machine.find("all computing at once"), std::string::npos) << shared.machine;
}

// CPU ranks overlap averaging with backward where the trainer would: --overlap on and off as
// given, auto by the trainer's rule (a hardware thread for each rank's compute and communication
// threads). With small buckets, overlap hides part of the allreduce.
TEST(ThisMachine, OverlapFollowsTheTrainersRule) {
  static_assert(overlap_fits(4, 2, 1) && !overlap_fits(2, 2, 1) && !overlap_fits(0, 1, 1) && overlap_fits(16, 2, 7));
  model::Profile p = minimal_profile();
  p.compute = to_compute_rates(made_up());
  const std::string path = testing::TempDir() + "scalelab-overlap-" + std::to_string(getpid()) + ".json";
  std::ofstream(path) << model::to_json(p).dump();
  auto run = [&](const std::string& overlap) {
    ScalingRequest q;
    q.workload = "cnn";
    q.machine = "this";
    q.profile = path;
    q.counts = {1, 2};
    q.overlap = overlap;
    q.step.averaging.bucket_cap_bytes = 64 * 1024;
    return simulate_scaling(q);
  };
  const ScalingResult on = run("on"), off = run("off"), automatic = run("auto");
  std::remove(path.c_str());
  EXPECT_TRUE(on.rows[1].overlap);
  EXPECT_FALSE(off.rows[1].overlap);
  EXPECT_EQ(automatic.rows[1].overlap, overlap_fits(limits::hardware_threads(), 2, 1));
  EXPECT_GT(off.rows[1].step.parts.exposed_comm_s, 0.0);
  EXPECT_LT(on.rows[1].step.parts.exposed_comm_s, off.rows[1].step.parts.exposed_comm_s);
  ScalingRequest bad;
  bad.overlap = "sometimes";
  EXPECT_THROW((void)simulate_scaling(bad), Error);
}

TEST(ProfileCompute, ANonPositiveRateIsAnInputError) {
  model::Profile p = minimal_profile();
  p.compute = to_compute_rates(made_up());
  nlohmann::json j = model::to_json(p);
  j["compute"]["pool_GBps"] = 0;
  EXPECT_THROW((void)model::profile_from_json(j, "bad.json"), Error);
}

}  // namespace
}  // namespace scalelab::sim
