// The heart of Horovod's DistributedOptimizer on CPU ranks: after the backward pass every rank
// holds its own gradient; averaging them by allreduce makes every rank take the same optimizer
// step. It executes a StepPlan (nn/step_plan.h), the same plan the GPU engine's
// gpu::BucketedAverager executes: the flat gradient buffer (nn/parameter.h) cut into buckets of
// whole tensors, in the order backward produces them, each reduced in place by one allreduce:
// the gradient buffer is its own fusion buffer, so nothing is copied. A bucket cap of 0 gives one
// allreduce per tensor, as Horovod does without fusion (the lesson: many small messages pay the
// latency many times).
// fp16 compression (Horovod's Compression.fp16): each bucket is scaled by 1/size, rounded to
// float16 into a separate wire buffer, summed in float16 (reduced in float32 by comm/reduce.h)
// and expanded back; half the bytes on the wire, about 3 significant digits kept.
//
//   nn::StepPlan plan(params.params(), {.bucket_cap_bytes = 64 << 20});
//   GradientAverager avg(comm, "ring", plan);
//   avg.average(params.grads());   // collective: every rank calls it with the same layout
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "collectives/algorithm.h"
#include "comm/communicator.h"
#include "nn/step_plan.h"

namespace scalelab::train {

class GradientAverager {
 public:
  // algorithm: an allreduce of collectives/ (usage error about "algorithm" if unknown).
  GradientAverager(comm::Communicator& comm, const std::string& algorithm, nn::StepPlan plan);
  // Replaces `grads` with their mean over all ranks, bucket by bucket. Allocates nothing.
  void average(std::span<float> grads);
  // The same for bucket `k` of the plan alone (collective: every rank reduces the buckets in plan
  // order; train/overlapped_averager.h calls it from its communication thread).
  void average_bucket(std::size_t k, std::span<float> grads);
  [[nodiscard]] const nn::StepPlan& plan() const { return plan_; }
  // "ring allreduce, 1 bucket of <= 64 MiB (4.6 MiB), float32 on the wire"
  [[nodiscard]] std::string describe() const;

 private:
  comm::Communicator& comm_;
  std::unique_ptr<collectives::Algorithm> algo_;
  nn::StepPlan plan_;
  std::vector<std::uint16_t> wire_;  // fp16 buffer, as long as the largest bucket
};

}  // namespace scalelab::train
