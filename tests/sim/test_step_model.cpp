// The step model (sim/step_model.h) on small hand-made workloads whose every time follows from
// the roofline and the cost model by hand: the parts of a step, how buckets queue behind
// backward, what overlap hides, when the input pipeline sets the pace, and the memory estimate.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "model/predict.h"
#include "sim/step_model.h"

namespace scalelab::sim {
namespace {

// A device with round numbers: 10 TFLOP/s and 100 GB/s at every kind's full efficiency.
DeviceSpec round_device() {
  DeviceSpec d;
  d.name = d.title = "round";
  d.fp32_tflops = 10;
  d.mem_bw_GBps = 100;
  d.memory_GiB = 16;
  for (Efficiency& e : d.efficiency) e = {1.0, 1.0};
  return d;
}

// Three dense layers of 1 MFLOP and 1,000 parameters each, with a ReLU between the first two.
Workload small_workload() {
  Workload w;
  w.name = w.title = "small";
  w.input_shape = {100};
  w.layers = {{"fc1", LayerKind::matmul, 1e6, 1000, 100, 100, ""},
              {"relu", LayerKind::elementwise, 100, 0, 100, 100, ""},
              {"fc2", LayerKind::matmul, 1e6, 1000, 100, 100, ""},
              {"fc3", LayerKind::matmul, 1e6, 1000, 100, 10, ""}};
  return w;
}

// Collective costs of 10 us + 1 ns per byte for a message, nothing for reductions: a ring
// allreduce of n bytes at 2 ranks then costs 2 x (10 us + n/2 ns) (model/profile.h's tables).
model::Profile linear_profile() {
  model::Profile p;
  p.host = "test";
  for (double s : {8.0, 1e3, 1e6, 1e8}) {
    for (auto* t : {&p.message_hot, &p.message_cold}) { t->bytes.push_back(s); t->seconds.push_back(1e-5 + s * 1e-9); }
    for (auto* t : {&p.reduce_hot, &p.reduce_cold}) { t->bytes.push_back(s); t->seconds.push_back(s * 1e-15); }
    for (auto* t : {&p.copy_hot, &p.copy_cold}) { t->bytes.push_back(s); t->seconds.push_back(s * 1e-15); }
  }
  return p;
}

double roofline(double flops, double bytes) { return std::max(flops / 10e12, bytes / 100e9); }

TEST(StepModel, OneDeviceIsForwardBackwardAndTheOptimizer) {
  const Workload w = small_workload();
  const DeviceSpec d = round_device();
  StepOptions o;
  o.batch = 10;
  o.optimizer_bytes_per_param = 20;
  const StepResult r = simulate_step({w, d, nullptr, o});
  double fwd = 0, bwd = 0;
  for (std::size_t i = 0; i < w.layers.size(); ++i) {
    const WorkloadLayer& l = w.layers[i];
    const double p = static_cast<double>(l.params);
    fwd += roofline(10 * l.forward_flops, 10 * (l.in_elems + l.out_elems) * 4 + 4 * p);
    const double flops = l.params > 0 ? (i == 0 ? 1.0 : 2.0) * l.forward_flops : l.forward_flops;
    bwd += roofline(10 * flops, 10 * (l.in_elems + l.out_elems) * 4 + 8 * p);
  }
  EXPECT_NEAR(r.parts.forward_s, fwd, fwd * 1e-12);
  EXPECT_NEAR(r.parts.backward_s, bwd, bwd * 1e-12);
  EXPECT_NEAR(r.parts.optimizer_s, 3000 * 20 / 100e9, 1e-15);
  EXPECT_EQ(r.parts.allreduce_s, 0.0);
  EXPECT_NEAR(r.step_s, fwd + bwd + r.parts.optimizer_s, 1e-15);
  EXPECT_NEAR(r.samples_per_s, 10 / r.step_s, 1e-6);
  EXPECT_NE(r.bottleneck.find("computation"), std::string::npos) << r.bottleneck;
}

// A layer's own activation (nn's fused ReLU) is, on a GPU, the separate pass a framework runs:
// forward it reads and writes the output, backward it reads the output and its gradient and
// writes the gradient, each at the elementwise kind's rate. On a CPU device (this machine's
// calibrated rates, which time the fused layer) it adds nothing.
TEST(StepModel, AnActivationInsideALayerIsASeparatePassOnGpusOnly) {
  Workload w = small_workload();
  const DeviceSpec gpu = round_device();
  DeviceSpec cpu = round_device();
  cpu.kind = "cpu";
  StepOptions o;
  o.batch = 10;
  const StepResult plain_gpu = simulate_step({w, gpu, nullptr, o});
  const StepResult plain_cpu = simulate_step({w, cpu, nullptr, o});
  w.layers[2].activation = "relu";  // fc2: 100 outputs per sample
  const StepResult fused_gpu = simulate_step({w, gpu, nullptr, o});
  const StepResult fused_cpu = simulate_step({w, cpu, nullptr, o});
  const double out_bytes = 10 * 100 * 4.0;
  EXPECT_NEAR(fused_gpu.layer_forward_s[2] - plain_gpu.layer_forward_s[2], 2 * out_bytes / 100e9, 1e-15);
  EXPECT_NEAR(fused_gpu.layer_backward_s[2] - plain_gpu.layer_backward_s[2], 3 * out_bytes / 100e9, 1e-15);
  EXPECT_NEAR(fused_gpu.step_s - plain_gpu.step_s, 5 * out_bytes / 100e9, 1e-15);
  EXPECT_DOUBLE_EQ(fused_cpu.step_s, plain_cpu.step_s);
}

// A run of layers the CPU engine fuses (DeviceSpec::fused_rates) takes its measured time, log-log
// between the batches it was timed at, shared among its layers as their own times are; a run
// of other figures, or a device without fused rates, is priced layer by layer.
TEST(StepModel, AFusedRunTakesItsMeasuredTimeSharedAmongItsLayers) {
  const Workload w = small_workload();
  DeviceSpec d = round_device();
  d.kind = "cpu";
  StepOptions o;
  o.batch = 10;
  const StepResult apart = simulate_step({w, d, nullptr, o});
  // fc1 and its ReLU as one run (at the start: runs are timed as a model's first layers): 4 us
  // per sample at 5 samples per call, 1 us at 20.
  const std::vector<WorkloadLayer> run(w.layers.begin(), w.layers.begin() + 2);
  d.fused_rates = {{run, 5, 4e-6}, {run, 20, 1e-6}};
  const StepResult fused = simulate_step({w, d, nullptr, o});
  const double run_s = 10 * 2e-6;  // at 10 samples: halfway (log-log) between 4 and 1 us
  double before = 0;
  for (std::size_t i : {0u, 1u}) before += apart.layer_forward_s[i] + apart.layer_backward_s[i];
  for (std::size_t i : {0u, 1u}) {
    EXPECT_NEAR(fused.layer_forward_s[i], apart.layer_forward_s[i] * run_s / before, 1e-15);
    EXPECT_NEAR(fused.layer_backward_s[i], apart.layer_backward_s[i] * run_s / before, 1e-15);
  }
  for (std::size_t i : {2u, 3u}) {
    EXPECT_DOUBLE_EQ(fused.layer_forward_s[i], apart.layer_forward_s[i]);
    EXPECT_DOUBLE_EQ(fused.layer_backward_s[i], apart.layer_backward_s[i]);
  }
  EXPECT_NEAR(fused.parts.compute_s(), apart.parts.compute_s() - before + run_s, 1e-15);
  // Figures that differ (fc1 with other outputs) are not the run, nor is the same run further on.
  Workload other = w;
  other.layers[0].out_elems = 101;
  const StepResult unmatched = simulate_step({other, d, nullptr, o});
  DeviceSpec plain = d;
  plain.fused_rates.clear();
  EXPECT_DOUBLE_EQ(unmatched.parts.compute_s(), simulate_step({other, plain, nullptr, o}).parts.compute_s());
  Workload later = w;
  later.layers.insert(later.layers.begin(), w.layers[3]);
  EXPECT_DOUBLE_EQ(simulate_step({later, d, nullptr, o}).parts.compute_s(), simulate_step({later, plain, nullptr, o}).parts.compute_s());
}

TEST(StepModel, BucketsStartWhenBackwardHasMadeThemAndQueueOnOneStream) {
  const Workload w = small_workload();
  const DeviceSpec d = round_device();
  const model::Predictor two(linear_profile(), 2);
  StepOptions o;
  o.batch = 10;
  o.averaging.bucket_cap_bytes = 4000;  // one layer's 1,000 float32 gradients a bucket
  o.algorithm = "ring";
  const StepResult r = simulate_step({w, d, &two, o});
  ASSERT_EQ(r.buckets.size(), 3u);  // fc3, fc2, fc1: the order backward produces them
  double free_at = 0;
  for (const BucketTiming& b : r.buckets) {
    EXPECT_EQ(b.wire_bytes, 4000.0);
    EXPECT_NEAR(b.start_s, std::max(b.ready_s, free_at), 1e-15);
    free_at = b.start_s + b.seconds;
  }
  // fc3's bucket is ready once fc3's backward ends; fc1's only at the very end of backward.
  EXPECT_NEAR(r.buckets[0].ready_s, r.layer_backward_s[3], 1e-15);
  EXPECT_NEAR(r.buckets[2].ready_s, r.parts.backward_s, 1e-15);
  EXPECT_NEAR(r.parts.exposed_comm_s, free_at - r.parts.backward_s, 1e-15);
  EXPECT_NEAR(r.step_s, r.parts.compute_s() + r.parts.exposed_comm_s + r.parts.optimizer_s, 1e-15);
  EXPECT_NEAR(r.samples_per_s, 2 * 10 / r.step_s, 1e-6);
}

TEST(StepModel, WithoutOverlapEveryAllreduceIsExposed) {
  const Workload w = small_workload();
  const DeviceSpec d = round_device();
  const model::Predictor two(linear_profile(), 2);
  StepOptions o;
  o.batch = 10;
  o.averaging.bucket_cap_bytes = 4000;
  o.overlap = false;
  const StepResult r = simulate_step({w, d, &two, o});
  EXPECT_NEAR(r.parts.exposed_comm_s, r.parts.allreduce_s, 1e-15);
  o.overlap = true;
  const StepResult hidden = simulate_step({w, d, &two, o});
  EXPECT_LT(hidden.parts.exposed_comm_s, r.parts.exposed_comm_s);
  EXPECT_NEAR(hidden.parts.allreduce_s, r.parts.allreduce_s, 1e-15);
}

// CPU ranks: the buckets are priced as training averages them (train/engine_cpu.cpp): in place and,
// unless float16 travels, on gradients in node memory, with auto's one choice for every bucket.
TEST(StepModel, CpuRanksArePricedAsTrainingAveragesTheGradients) {
  model::Profile p = linear_profile();
  p.peer_copy = {{8, 1e8}, {8 / 400e9, 1e8 / 400e9}};  // reading a peer's buffer in place is cheap,
  p.shm_sync_s = 50e-9;                                // and so is a flag round
  const model::Predictor two(p, 2);
  StepOptions o;
  o.batch = 10;
  o.averaging.bucket_cap_bytes = 4000;
  const StepResult r = simulate_step({small_workload(), round_device(), &two, o});
  ASSERT_EQ(r.buckets.size(), 3u);
  for (const BucketTiming& b : r.buckets) {
    EXPECT_EQ(b.detail, "calibrated shm, shared buffers");
    EXPECT_NEAR(b.seconds, two.predict(collectives::Collective::allreduce, "shm", std::nullopt, 4000, true, true).time_s,
                1e-15);
  }
  o.averaging.fp16_wire = true;  // converted into the averager's own buffer: nothing read in place
  for (const BucketTiming& b : simulate_step({small_workload(), round_device(), &two, o}).buckets) {
    EXPECT_EQ(b.detail.find("shared buffers"), std::string::npos) << b.detail;
  }
}

TEST(StepModel, ASlowPipelineSetsThePace) {
  const Workload w = small_workload();
  const DeviceSpec d = round_device();
  StepOptions o;
  o.batch = 10;
  o.input = {/*decode_per_core_per_s=*/100, /*cores=*/2, /*host_to_device_GBps=*/0};
  const StepResult r = simulate_step({w, d, nullptr, o});
  EXPECT_NEAR(r.parts.input_s, 10.0 / 200.0, 1e-12);
  EXPECT_NEAR(r.step_s, 0.05, 1e-12);
  EXPECT_GT(r.parts.pipeline_wait_s, 0.0);
  EXPECT_NE(r.bottleneck.find("input pipeline"), std::string::npos) << r.bottleneck;
}

TEST(StepModel, MemoryCountsWeightsGradientsStateAndActivations) {
  const Workload w = small_workload();
  const MemoryEstimate m = training_memory(w, 10, Precision::fp32, 28);  // Adam
  EXPECT_EQ(m.parameters, 3000 * 4.0);
  EXPECT_EQ(m.gradients, 3000 * 4.0);
  EXPECT_EQ(m.optimizer_state, 3000 * 8.0);
  EXPECT_EQ(m.activations, 10 * (100 + 100 + 10) * 4.0);  // the ReLU's output is not kept
  const MemoryEstimate half = training_memory(w, 10, Precision::amp, 28);
  EXPECT_EQ(half.parameters, 3000 * 6.0);  // float32 master weights and their float16 copy
  EXPECT_EQ(half.activations, m.activations / 2);
}

TEST(StepModel, AZeroBatchIsAUsageError) {
  StepOptions o;
  o.batch = 0;
  try {
    (void)simulate_step({small_workload(), round_device(), nullptr, o});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.parameter(), "batch_size");
  }
}

}  // namespace
}  // namespace scalelab::sim
