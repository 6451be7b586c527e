// GradientAverager (train/gradient_averager.h).
#include "train/gradient_averager.h"

#include "comm/reduce.h"

namespace scalelab::train {

GradientAverager::GradientAverager(comm::Communicator& comm, const std::string& algorithm, nn::StepPlan plan)
    : comm_(comm),
      algo_(collectives::make_algorithm(collectives::Collective::allreduce, algorithm)),
      plan_(std::move(plan)) {
  if (plan_.options().fp16_wire) wire_.resize(plan_.largest_count());
}

void GradientAverager::average(std::span<float> grads) {
  if (comm_.size() == 1) return;
  for (std::size_t k = 0; k < plan_.size(); ++k) average_bucket(k, grads);
}

void GradientAverager::average_bucket(std::size_t k, std::span<float> grads) {
  const int n = comm_.size();
  if (n == 1) return;
  const float scale = 1.0f / static_cast<float>(n);
  const nn::Bucket& b = plan_.buckets()[k];
  float* g = grads.data() + b.offset;
  if (plan_.options().fp16_wire) {
    for (std::size_t i = 0; i < b.count; ++i) wire_[i] = comm::float_to_half(g[i] * scale);
    algo_->run(comm_, wire_.data(), wire_.data(), b.count, comm::DataType::f16, comm::ReduceOp::sum, 0);
    for (std::size_t i = 0; i < b.count; ++i) g[i] = comm::half_to_float(wire_[i]);
  } else {
    algo_->run(comm_, g, g, b.count, comm::DataType::f32, comm::ReduceOp::sum, 0);
    for (std::size_t i = 0; i < b.count; ++i) g[i] *= scale;
  }
}

std::string GradientAverager::describe() const {
  return std::string(algo_->name()) + " allreduce, " + plan_.describe() +
         (plan_.options().fp16_wire ? ", float16 on the wire" : ", float32 on the wire");
}

}  // namespace scalelab::train
