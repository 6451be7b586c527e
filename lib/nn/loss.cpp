// Softmax cross-entropy (see loss.h), computed with the max-subtraction trick so that large
// logits neither overflow nor lose the small probabilities.
#include "nn/loss.h"

#include <cmath>
#include <string>

#include "core/error.h"

namespace scalelab::nn {
namespace {

template <class Label>
LossResult softmax_ce(ConstTensorView logits, std::span<const Label> labels, TensorView dlogits, float grad_scale) {
  if (logits.shape.rank() != 2) throw_usage("softmax_cross_entropy: logits must be (batch, classes), got " + logits.shape.str());
  const std::size_t n = logits.shape[0], c = logits.shape[1];
  if (labels.size() != n)
    throw_input("softmax_cross_entropy: " + std::to_string(labels.size()) + " labels for a batch of " + std::to_string(n));
  LossResult r;
  double total = 0;
  const float g = grad_scale / static_cast<float>(n);
  for (std::size_t i = 0; i < n; ++i) {
    const float* z = logits.data + i * c;
    const auto y = static_cast<long long>(labels[i]);
    if (y < 0 || static_cast<std::size_t>(y) >= c)
      throw_input("label " + std::to_string(y) + " at batch index " + std::to_string(i) + " is outside [0, " +
                  std::to_string(c) + "): check the dataset's labels and the model's class count");
    std::size_t arg = 0;
    for (std::size_t j = 1; j < c; ++j) if (z[j] > z[arg]) arg = j;
    const float m = z[arg];
    double sum = 0;
    for (std::size_t j = 0; j < c; ++j) sum += std::exp(double(z[j] - m));
    const double log_sum = std::log(sum);
    total += log_sum - double(z[y] - m);
    r.correct += arg == static_cast<std::size_t>(y);
    if (!dlogits.empty()) {
      float* d = dlogits.data + i * c;
      for (std::size_t j = 0; j < c; ++j) d[j] = static_cast<float>(std::exp(double(z[j] - m) - log_sum)) * g;
      d[y] -= g;
    }
  }
  r.loss = n ? total / double(n) : 0.0;
  return r;
}

}  // namespace

LossResult softmax_cross_entropy(ConstTensorView logits, std::span<const std::int32_t> labels, TensorView dlogits,
                                 float grad_scale) {
  return softmax_ce(logits, labels, dlogits, grad_scale);
}

LossResult softmax_cross_entropy(ConstTensorView logits, std::span<const std::uint8_t> labels, TensorView dlogits,
                                 float grad_scale) {
  return softmax_ce(logits, labels, dlogits, grad_scale);
}

}  // namespace scalelab::nn
