// GradientAverager (train/gradient_averager.h).
#include "train/gradient_averager.h"

#include <algorithm>

#include "comm/reduce.h"
#include "core/error.h"
#include "core/size_parse.h"

namespace scalelab::train {

GradientAverager::GradientAverager(comm::Communicator& comm, const std::string& algorithm,
                                   std::size_t fusion_threshold_bytes, bool fp16, const nn::ParameterSet& params)
    : comm_(comm),
      algo_(collectives::make_algorithm(collectives::Collective::allreduce, algorithm)),
      threshold_(fusion_threshold_bytes),
      fp16_(fp16) {
  const std::size_t total = params.size();
  const std::size_t elem_bytes = fp16_ ? 2 : 4;
  if (threshold_ == 0) {
    for (const auto& p : params.params()) chunks_.emplace_back(p.offset, p.size);
  } else {
    const std::size_t per_chunk = std::max<std::size_t>(1, threshold_ / elem_bytes);
    for (std::size_t off = 0; off < total; off += per_chunk) chunks_.emplace_back(off, std::min(per_chunk, total - off));
  }
  std::size_t largest = 0;
  for (const auto& c : chunks_) largest = std::max(largest, c.second);
  if (fp16_) wire_.resize(largest);
}

void GradientAverager::average(std::span<float> grads) {
  const int n = comm_.size();
  if (n == 1) return;
  const float scale = 1.0f / static_cast<float>(n);
  for (const auto& [offset, count] : chunks_) {
    float* g = grads.data() + offset;
    if (fp16_) {
      for (std::size_t i = 0; i < count; ++i) wire_[i] = comm::float_to_half(g[i] * scale);
      algo_->run(comm_, wire_.data(), wire_.data(), count, comm::DataType::f16, comm::ReduceOp::sum, 0);
      for (std::size_t i = 0; i < count; ++i) g[i] = comm::half_to_float(wire_[i]);
    } else {
      algo_->run(comm_, g, g, count, comm::DataType::f32, comm::ReduceOp::sum, 0);
      for (std::size_t i = 0; i < count; ++i) g[i] *= scale;
    }
  }
}

std::size_t GradientAverager::wire_bytes() const {
  std::size_t n = 0;
  for (const auto& c : chunks_) n += c.second;
  return n * (fp16_ ? 2 : 4);
}

std::string GradientAverager::describe() const {
  std::string s = std::string(algo_->name()) + " allreduce, " + std::to_string(chunks_.size()) +
                  (chunks_.size() == 1 ? " call" : " calls") + " per step";
  s += threshold_ == 0 ? " (fusion off: one per tensor)" : " (fusion threshold " + format_size(threshold_) + ")";
  s += fp16_ ? ", float16 on the wire" : ", float32";
  return s;
}

}  // namespace scalelab::train
