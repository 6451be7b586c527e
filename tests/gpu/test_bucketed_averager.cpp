// BucketedAverager (gpu/bucketed_averager.h) in one process: over 1 GPU and over every visible
// GPU (up to 4, one thread each, comm::run_nccl_single_process), the averaged buffer equals the
// plain mean over ranks (test_bucketed_averager_check.h) with several buckets, one bucket, one
// per tensor, parameters marked in backward order, in the wrong order and not at all, float32
// and float16 on the wire; the small statistics sum (allreduce_sum) eagerly and inside a captured
// CUDA graph; and the float16 conversions bit for bit against the CPU's. These skip
// without a GPU; the usage error for a communicator that is not nccl runs everywhere.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <ostream>
#include <random>
#include <vector>

#include "comm/local.h"
#include "comm/reduce.h"
#include "core/error.h"
#include "gpu/bucketed_averager_kernels.h"
#include "test_bucketed_averager_check.h"
#include "nn/step_plan.h"

namespace scalelab::gpu::test {
namespace {

struct Case {
  const char* label;
  std::size_t bucket_bytes;
  bool fp16;
  ReadyOrder order;
};

// What gtest prints for a parameter (its label, not its bytes).
void PrintTo(const Case& c, std::ostream* os) { *os << c.label; }

class BucketedAveragerMean : public ::testing::TestWithParam<Case> {};

void run_on(int gpus, const Case& c) {
  comm::run_nccl_single_process(gpus, [&](comm::Communicator& comm) { check_averaging(comm, c.bucket_bytes, c.fp16, c.order); });
}

TEST_P(BucketedAveragerMean, OneGpu) {
  const std::string reason = no_device_reason();
  if (!reason.empty()) GTEST_SKIP() << "no usable CUDA device: " << reason;
  run_on(1, GetParam());
}

TEST_P(BucketedAveragerMean, EveryVisibleGpu) {
  const std::string reason = no_device_reason();
  if (!reason.empty()) GTEST_SKIP() << "no usable CUDA device: " << reason;
  int count = 0;
  cudaGetDeviceCount(&count);
  if (count < 2) GTEST_SKIP() << "one GPU visible: the multi-GPU mean needs two or more";
  run_on(std::min(count, 4), GetParam());
}

INSTANTIATE_TEST_SUITE_P(
    Buckets, BucketedAveragerMean,
    ::testing::Values(Case{"several_buckets_backward", 256 << 10, false, ReadyOrder::backward},
                      Case{"several_buckets_forward_order", 256 << 10, false, ReadyOrder::forward},
                      Case{"several_buckets_only_finish", 256 << 10, false, ReadyOrder::only_finish},
                      Case{"one_bucket", nn::kDefaultBucketCapBytes, false, ReadyOrder::backward},
                      Case{"one_per_tensor", 0, false, ReadyOrder::backward},
                      Case{"several_buckets_fp16", 256 << 10, true, ReadyOrder::backward},
                      Case{"one_per_tensor_fp16", 0, true, ReadyOrder::forward}),
    [](const ::testing::TestParamInfo<Case>& p) { return std::string(p.param.label); });

// The float16 wire conversions against comm/reduce.h's (the CPU averager's): bit for bit, over
// normal, subnormal, overflowing and rounding-tie values.
TEST(Float16Wire, ConversionsMatchTheCpuOnes) {
  const std::string reason = no_device_reason();
  if (!reason.empty()) GTEST_SKIP() << "no usable CUDA device: " << reason;
  std::vector<float> x = {0.0f, -0.0f, 1.0f, -2.5f, 65504.0f, 70000.0f, 6e-8f, 3e-5f, 1.0f + 1.0f / 2048.0f,
                          1.0f + 3.0f / 2048.0f};
  std::mt19937 rng(std::random_device{}());
  std::normal_distribution<float> d(0.0f, 4.0f);
  for (int i = 0; i < 100000; ++i) x.push_back(d(rng));
  const float scale = 1.0f / 3.0f;
  const std::size_t n = x.size();
  float* src = nullptr;
  void* wire = nullptr;
  ASSERT_EQ(cudaMalloc(&src, n * sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&wire, n * 2), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(src, x.data(), n * sizeof(float), cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(launch_scale_to_half(src, wire, n, scale, nullptr), cudaSuccess);
  std::vector<std::uint16_t> halves(n);
  ASSERT_EQ(cudaMemcpy(halves.data(), wire, n * 2, cudaMemcpyDeviceToHost), cudaSuccess);
  ASSERT_EQ(launch_half_to_float(wire, src, n, nullptr), cudaSuccess);
  std::vector<float> back(n);
  ASSERT_EQ(cudaMemcpy(back.data(), src, n * sizeof(float), cudaMemcpyDeviceToHost), cudaSuccess);
  cudaFree(src);
  cudaFree(wire);
  for (std::size_t i = 0; i < n; ++i) {
    ASSERT_EQ(halves[i], comm::float_to_half(x[i] * scale)) << "element " << i << " = " << x[i];
    ASSERT_EQ(back[i], comm::half_to_float(halves[i])) << "element " << i << " = " << x[i];
  }
}

// allreduce_sum (SyncBatchNorm's statistics): a sum over the ranks of a small device buffer,
// ordered after the compute stream's work and before what the compute stream does next, eagerly
// and inside a captured CUDA graph (as the CUDA engine replays a step), between two buckets' steps.
void check_allreduce_sum(comm::Communicator& comm) {
  ASSERT_EQ(cudaSetDevice(comm::nccl_handle(comm).device), cudaSuccess);
  auto layout = averager_layout();
  float* grads = nullptr;
  float* stats = nullptr;
  constexpr std::size_t kStats = 33;  // 2C+1 for C = 16
  ASSERT_EQ(cudaMalloc(&grads, layout->size() * sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&stats, kStats * sizeof(float)), cudaSuccess);
  cudaStream_t compute = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&compute, cudaStreamNonBlocking), cudaSuccess);
  {
    BucketedAverager avg(comm, nn::StepPlan(layout->params(), {}), grads);
    std::vector<float> host(kStats), back(kStats);
    for (int round = 0; round < 2; ++round) {  // 0: eager, 1: captured and replayed
      for (std::size_t i = 0; i < kStats; ++i) host[i] = static_cast<float>(comm.rank() + 1) * static_cast<float>(i + round);
      ASSERT_EQ(cudaMemcpyAsync(stats, host.data(), kStats * sizeof(float), cudaMemcpyHostToDevice, compute), cudaSuccess);
      if (round == 0) {
        avg.allreduce_sum(stats, kStats, compute);
      } else {
        cudaGraph_t graph = nullptr;
        cudaGraphExec_t exec = nullptr;
        ASSERT_EQ(cudaStreamBeginCapture(compute, cudaStreamCaptureModeThreadLocal), cudaSuccess);
        avg.allreduce_sum(stats, kStats, compute);
        ASSERT_EQ(cudaStreamEndCapture(compute, &graph), cudaSuccess);
        ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
        ASSERT_EQ(cudaGraphLaunch(exec, compute), cudaSuccess);
        ASSERT_EQ(cudaStreamSynchronize(compute), cudaSuccess);
        (void)cudaGraphExecDestroy(exec);
        (void)cudaGraphDestroy(graph);
      }
      ASSERT_EQ(cudaMemcpyAsync(back.data(), stats, kStats * sizeof(float), cudaMemcpyDeviceToHost, compute), cudaSuccess);
      avg.synchronize(compute);
      const int p = comm.size();
      for (std::size_t i = 0; i < kStats; ++i) {
        const double want = double(p) * (p + 1) / 2.0 * double(i + round);
        ASSERT_EQ(back[i], static_cast<float>(want)) << "element " << i << ", round " << round << ", rank " << comm.rank();
      }
    }
  }
  cudaStreamDestroy(compute);
  cudaFree(stats);
  cudaFree(grads);
}

TEST(BucketedAveragerSum, OneGpuEagerAndCaptured) {
  const std::string reason = no_device_reason();
  if (!reason.empty()) GTEST_SKIP() << "no usable CUDA device: " << reason;
  comm::run_nccl_single_process(1, [](comm::Communicator& comm) { check_allreduce_sum(comm); });
}

TEST(BucketedAveragerSum, EveryVisibleGpuEagerAndCaptured) {
  const std::string reason = no_device_reason();
  if (!reason.empty()) GTEST_SKIP() << "no usable CUDA device: " << reason;
  int count = 0;
  cudaGetDeviceCount(&count);
  if (count < 2) GTEST_SKIP() << "one GPU visible: a sum over ranks needs two or more";
  comm::run_nccl_single_process(std::min(count, 4), [](comm::Communicator& comm) { check_allreduce_sum(comm); });
}

TEST(BucketedAveragerChecks, NeedsTheNcclBackend) {
  auto layout = averager_layout();
  comm::run_local(1, [&](comm::Communicator& comm) {
    try {
      BucketedAverager avg(comm, nn::StepPlan(layout->params(), {}), nullptr);
      FAIL() << "a local communicator was accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::usage);
      EXPECT_EQ(e.parameter(), "backend") << e.what();  // the CLI prints it as --backend
      EXPECT_NE(std::string(e.what()).find("use nccl"), std::string::npos) << e.what();
    }
  });
}

}  // namespace
}  // namespace scalelab::gpu::test
