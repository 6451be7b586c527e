// StepPlan: how one training step averages its gradients, as a plain value. It is computed from
// a model's parameter list and the averaging options alone (no communicator, no device), so the
// CPU averager (train/gradient_averager.h) and the GPU averager (gpu/bucketed_averager.h) execute
// the same plan, and a cost model can price it without running anything.
//
// Buckets, as PyTorch DDP's bucket_cap_mb and Horovod's fusion threshold form them: parameters
// are taken in REVERSE declaration order, the order backward produces their gradients, and
// packed greedily; a bucket is closed when the next tensor would take it past
// `bucket_cap_bytes`, counted in float32 gradient bytes whatever the wire precision. A tensor
// larger than the cap gets a bucket of its own; a cap of 0 gives one bucket per tensor. Because
// the flat buffer (nn/parameter.h) is in declaration order, consecutive parameters in reverse
// order are adjacent in memory, so every bucket is ONE range [offset, offset + count) of the
// buffer (the alignment padding between tensors included, which is harmless to reduce). Bucket 0
// holds the LAST parameters: it is ready first, during backward, once the gradient of its
// lowest-declared parameter (`Bucket::first_param`) exists, and every rank launches the buckets
// in this same order (NCCL requires it).
//
// Accumulation: the buckets are averaged once per optimizer step, after the last of
// `backward_passes_per_step` backward passes (Horovod's backward_passes_per_step). The trainer
// runs the passes; the plan records their number for whoever prices a step.
//
//   StepPlan plan(params.params(), {.bucket_cap_bytes = 25 << 20, .fp16_wire = false});
//   for (const Bucket& b : plan.buckets()) ... b.offset, b.count, plan.wire_bytes(b)
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "nn/parameter.h"

namespace scalelab::nn {

// The cap scalelab uses unless told otherwise: Horovod's fusion threshold of 64 MiB (PyTorch
// DDP's default bucket_cap_mb is 25 MB).
inline constexpr std::size_t kDefaultBucketCapBytes = std::size_t{64} << 20;

struct AveragingOptions {
  std::size_t bucket_cap_bytes = kDefaultBucketCapBytes;  // float32 gradient bytes per bucket; 0: one per tensor
  bool fp16_wire = false;                                 // gradients travel as float16
  int backward_passes_per_step = 1;                       // micro-batches accumulated before averaging
};

struct Bucket {
  std::size_t offset;       // floats into the flat gradient buffer
  std::size_t count;        // floats, padding between its tensors included
  std::size_t first_param;  // lowest declaration index in the bucket: its gradient completes the bucket
  std::size_t last_param;   // highest declaration index in the bucket (inclusive)
  [[nodiscard]] std::size_t params() const { return last_param - first_param + 1; }
};

class StepPlan {
 public:
  // params: a finalized ParameterSet's params() (offsets increasing). Throws runtime if they are
  // not, and a usage error about "backward_passes_per_step" below 1.
  StepPlan(const std::vector<ParamInfo>& params, const AveragingOptions& options);

  [[nodiscard]] const AveragingOptions& options() const { return options_; }
  // In launch order: bucket 0 holds the last-declared parameters.
  [[nodiscard]] const std::vector<Bucket>& buckets() const { return buckets_; }
  [[nodiscard]] std::size_t size() const { return buckets_.size(); }
  // Parameters the plan covers (the model's parameter tensors).
  [[nodiscard]] std::size_t param_count() const { return bucket_of_.size(); }
  // The bucket that holds parameter `param` (declaration index).
  [[nodiscard]] std::size_t bucket_of(std::size_t param) const { return bucket_of_.at(param); }
  // The largest bucket's count in floats (sizes a wire buffer once).
  [[nodiscard]] std::size_t largest_count() const { return largest_; }
  // Bytes of one element on the wire: 2 with float16, else 4.
  [[nodiscard]] std::size_t wire_element_bytes() const { return options_.fp16_wire ? 2 : 4; }
  // Bytes one rank hands to the allreduce for bucket `b`, and for all of them (one step).
  [[nodiscard]] std::size_t wire_bytes(const Bucket& b) const { return b.count * wire_element_bytes(); }
  [[nodiscard]] std::size_t wire_bytes() const;
  // "4 buckets of <= 25 MiB (11.2 MiB, 3.1 MiB, ...)" for the start-of-run summary.
  [[nodiscard]] std::string describe() const;

 private:
  AveragingOptions options_;
  std::vector<Bucket> buckets_;
  std::vector<std::size_t> bucket_of_;
  std::size_t largest_ = 0;
};

// Which buckets of a plan are complete as backward reports its final gradients, one step at a
// time: the bookkeeping both averagers that overlap backward share (train/overlapped_averager.h,
// gpu/bucketed_averager.h). The plan must outlive it.
//
//   BucketReadiness ready(plan);
//   if (ready.mark(param)) ...   // param's bucket has just become complete
//   ready.reset();               // the next step
class BucketReadiness {
 public:
  explicit BucketReadiness(const StepPlan& plan);
  // The gradient of parameter `param` (declaration index) is final for this step; true when that
  // completes its bucket. Throws a runtime error for an index out of range or one reported twice
  // in a step.
  bool mark(std::size_t param);
  [[nodiscard]] bool complete(std::size_t bucket) const { return pending_[bucket] == 0; }
  void reset();

 private:
  const StepPlan& plan_;
  std::vector<std::size_t> pending_;  // per bucket: parameters not yet final
  std::vector<char> done_;            // per parameter, this step
};

}  // namespace scalelab::nn
