// Softmax cross-entropy over a batch of logits: the mean loss, how many argmax predictions match
// the labels, and (when dlogits is given) the gradient of the mean loss with respect to the logits,
// (softmax - onehot) * grad_scale / batch. grad_scale lets a trainer that accumulates k
// micro-batches per step pass 1/k, so that the accumulated gradient is the mean over all of them.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>

#include "nn/tensor.h"

namespace scalelab::nn {

struct LossResult {
  double loss = 0;          // mean over the batch, natural log
  std::size_t correct = 0;  // argmax(logits) == label
};

// logits: (batch, classes). labels: batch entries in [0, classes); out of range is an input error.
// dlogits: same shape as logits, or an empty view to skip the gradient (evaluation).
LossResult softmax_cross_entropy(ConstTensorView logits, std::span<const std::int32_t> labels,
                                 TensorView dlogits = {}, float grad_scale = 1.0f);
LossResult softmax_cross_entropy(ConstTensorView logits, std::span<const std::uint8_t> labels,
                                 TensorView dlogits = {}, float grad_scale = 1.0f);

}  // namespace scalelab::nn
