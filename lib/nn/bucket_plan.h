// BucketPlan: how the flat gradient buffer (nn/parameter.h) is cut into the buckets that the GPU
// engine allreduces while backward still runs (gpu/bucketed_averager.h), as PyTorch DDP's
// bucket_cap_mb does.
//
// Parameters are taken in REVERSE declaration order, the order backward produces their gradients,
// and packed greedily: a bucket is closed when the next tensor would take it past `bucket_bytes`
// (counted in float32 gradient bytes). A tensor larger than the cap gets a bucket of its own; a
// cap of 0 gives one bucket per tensor. Because the flat buffer is in declaration order,
// consecutive parameters in reverse order are adjacent in memory, so every bucket is ONE range
// [offset, offset + count) of the buffer (the alignment padding between tensors included, which
// is harmless to reduce). Bucket 0 holds the LAST parameters: it is ready first and is launched
// first, and every rank launches the buckets in this same order (NCCL requires it).
//
//   BucketPlan plan(params.params(), 25 << 20);
//   for (const Bucket& b : plan.buckets()) ... b.offset, b.count, b.first_param, b.last_param
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "nn/parameter.h"

namespace scalelab::nn {

// PyTorch DDP's default bucket_cap_mb.
inline constexpr std::size_t kDefaultBucketBytes = std::size_t{25} << 20;

struct Bucket {
  std::size_t offset;       // floats into the flat gradient buffer
  std::size_t count;        // floats, padding between its tensors included
  std::size_t first_param;  // lowest declaration index in the bucket
  std::size_t last_param;   // highest declaration index in the bucket (inclusive)
  [[nodiscard]] std::size_t params() const { return last_param - first_param + 1; }
};

class BucketPlan {
 public:
  // params: a finalized ParameterSet's params() (offsets increasing). Throws runtime if they are not.
  BucketPlan(const std::vector<ParamInfo>& params, std::size_t bucket_bytes);

  // In launch order: bucket 0 holds the last-declared parameters.
  [[nodiscard]] const std::vector<Bucket>& buckets() const { return buckets_; }
  [[nodiscard]] std::size_t size() const { return buckets_.size(); }
  // The bucket that holds parameter `param` (declaration index).
  [[nodiscard]] std::size_t bucket_of(std::size_t param) const { return bucket_of_.at(param); }
  // The largest bucket's count in floats (sizes a wire buffer once).
  [[nodiscard]] std::size_t largest_count() const { return largest_; }
  [[nodiscard]] std::size_t bucket_bytes() const { return cap_; }
  // "4 buckets of <= 25 MiB (11.2 MiB, 3.1 MiB, ...)" for the start-of-run summary.
  [[nodiscard]] std::string describe() const;

 private:
  std::size_t cap_;
  std::vector<Bucket> buckets_;
  std::vector<std::size_t> bucket_of_;
  std::size_t largest_ = 0;
};

}  // namespace scalelab::nn
