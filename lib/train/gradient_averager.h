// The heart of Horovod's DistributedOptimizer: after the backward pass every rank holds its own
// gradient; averaging them by allreduce makes every rank take the same optimizer step.
//
// Fusion: Horovod copies small tensors into a fusion buffer (HOROVOD_FUSION_THRESHOLD) so one
// allreduce carries many of them. Here every gradient already lives in ONE flat buffer
// (nn/parameter.h), so the "fusion buffer" is the gradient buffer itself, cut into chunks of at
// most `fusion_threshold` bytes and reduced in place, chunk by chunk: no copy. A threshold of 0
// turns fusion off: one allreduce per parameter tensor, as Horovod does without fusion (the lesson:
// many small messages pay the latency many times).
// fp16 compression (Horovod's Compression.fp16): each chunk is scaled by 1/size, rounded to
// float16 into a separate wire buffer, summed in float16 (reduced in float32 by comm/reduce.h)
// and expanded back; half the bytes on the wire, about 3 significant digits kept.
//
//   GradientAverager avg(comm, "ring", 64 << 20, /*fp16=*/false, params);
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
#include "nn/parameter.h"

namespace scalelab::train {

class GradientAverager {
 public:
  GradientAverager(comm::Communicator& comm, const std::string& algorithm, std::size_t fusion_threshold_bytes,
                   bool fp16, const nn::ParameterSet& params);
  // Replaces `grads` with their mean over all ranks. Allocates nothing.
  void average(std::span<float> grads);
  // The [offset, offset+count) ranges reduced by one call each, in order.
  [[nodiscard]] const std::vector<std::pair<std::size_t, std::size_t>>& chunks() const { return chunks_; }
  [[nodiscard]] std::string describe() const;  // "ring allreduce, 1 chunk of <= 64 MiB, float32"
  // Bytes one rank hands to allreduce per call (all chunks), for bandwidth figures.
  [[nodiscard]] std::size_t wire_bytes() const;

 private:
  comm::Communicator& comm_;
  std::unique_ptr<collectives::Algorithm> algo_;
  std::size_t threshold_;
  bool fp16_;
  std::vector<std::pair<std::size_t, std::size_t>> chunks_;
  std::vector<std::uint16_t> wire_;  // fp16 buffer, as long as the largest chunk
};

}  // namespace scalelab::train
