// The check shared by the bucketed averager's tests (one process over the visible GPUs, and
// under mpiexec): every rank fills a NaN-poisoned device gradient buffer tensor by tensor on its
// compute stream, as backward would, marking each parameter ready in the order asked; after
// finish() the compute stream copies the result back to the host, and every tensor must hold the
// mean over ranks of the per-rank values (computed here in double), within float32 or float16
// precision. Two steps, so that the per-step bookkeeping is reset correctly. A bucket launched
// before its gradients arrived would carry NaN; a compute stream that did not wait would copy
// back unreduced values.
#pragma once
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "no_device_reason.h"
#include "comm/backends/nccl_communicator.h"
#include "comm/communicator.h"
#include "gpu/bucketed_averager.h"
#include "nn/parameter.h"

namespace scalelab::gpu::test {

using test_support::no_device_reason;

// Tensors from 1 float to 1.2 MiB, every kind.
inline std::unique_ptr<nn::ParameterSet> averager_layout() {
  auto set = std::make_unique<nn::ParameterSet>();
  set->add("conv1.weight", nn::Shape{16, 1, 5, 5}, nn::ParamKind::weight);
  set->add("conv1.bias", nn::Shape{16}, nn::ParamKind::bias);
  set->add("bn.scale", nn::Shape{16}, nn::ParamKind::norm_scale);
  set->add("fc1.weight", nn::Shape{300, 1000}, nn::ParamKind::weight);
  set->add("fc1.bias", nn::Shape{300}, nn::ParamKind::bias);
  set->add("fc2.weight", nn::Shape{10, 300}, nn::ParamKind::weight);
  set->add("fc2.bias", nn::Shape{1}, nn::ParamKind::bias);
  set->finalize();
  return set;
}

// Rank r's gradient element i at step s: multiples of 1/64 in [-0.75, 0.83].
inline float grad_of(int rank, int step, std::size_t i) {
  return static_cast<float>((i * 7 + static_cast<std::size_t>(rank) * 13 + static_cast<std::size_t>(step) * 29) % 101) /
             64.0f -
         0.75f;
}

enum class ReadyOrder { backward, forward, only_finish };

inline void check_averaging(comm::Communicator& comm, std::size_t bucket_bytes, bool fp16, ReadyOrder order) {
  ASSERT_EQ(cudaSetDevice(comm::nccl_handle(comm).device), cudaSuccess);
  auto layout = averager_layout();
  const std::size_t n = layout->size();
  float* grads = nullptr;
  ASSERT_EQ(cudaMalloc(&grads, n * sizeof(float)), cudaSuccess);
  cudaStream_t compute = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&compute, cudaStreamNonBlocking), cudaSuccess);
  std::vector<float> host(n), back(n);
  {
    BucketedAverager avg(comm, nn::StepPlan(layout->params(), {.bucket_cap_bytes = bucket_bytes, .fp16_wire = fp16}), grads);
    for (int step = 0; step < 2; ++step) {
      for (std::size_t i = 0; i < n; ++i) host[i] = grad_of(comm.rank(), step, i);
      ASSERT_EQ(cudaMemsetAsync(grads, 0xFF, n * sizeof(float), compute), cudaSuccess);  // NaN
      auto produce = [&](std::size_t p) {
        const nn::ParamInfo& info = layout->info(p);
        ASSERT_EQ(cudaMemcpyAsync(grads + info.offset, host.data() + info.offset, info.size * sizeof(float),
                                  cudaMemcpyHostToDevice, compute),
                  cudaSuccess);
        if (order != ReadyOrder::only_finish) avg.param_ready(p, compute);
      };
      if (order == ReadyOrder::forward) {
        for (std::size_t p = 0; p < layout->count(); ++p) produce(p);
      } else {
        for (std::size_t p = layout->count(); p-- > 0;) produce(p);
      }
      avg.finish(compute);
      ASSERT_EQ(cudaMemcpyAsync(back.data(), grads, n * sizeof(float), cudaMemcpyDeviceToHost, compute), cudaSuccess);
      avg.synchronize(compute);
      // float16 keeps 11 significant bits: each rank's |g/size| < 1 rounds within 2^-11, the sum once more.
      const double tol = fp16 ? 2e-3 : 1e-6;
      for (const nn::ParamInfo& info : layout->params()) {
        for (std::size_t i = info.offset; i < info.offset + info.size; ++i) {
          double mean = 0.0;
          for (int r = 0; r < comm.size(); ++r) mean += grad_of(r, step, i);
          mean /= comm.size();
          ASSERT_NEAR(back[i], mean, tol) << info.name << " element " << i - info.offset << ", step " << step
                                          << ", rank " << comm.rank() << ", " << avg.describe();
        }
      }
      const AllreduceTiming t = avg.last_timing();
      EXPECT_EQ(t.buckets, avg.plan().size());
      EXPECT_GT(t.allreduce_ms, 0.0);
      EXPECT_GE(t.span_ms + 1e-3, t.exposed_ms);
      EXPECT_NEAR(t.overlapped_ms + t.exposed_ms, std::max(t.span_ms, t.exposed_ms), 1e-3);
    }
  }
  cudaStreamDestroy(compute);
  cudaFree(grads);
}

}  // namespace scalelab::gpu::test
