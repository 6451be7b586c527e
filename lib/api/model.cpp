// The public API's models (include/scalelab/model.h) over lib/nn.
#include <string_view>

#include "api/context.h"
#include "api/trace.h"
#include "comm/consistency.h"
#include "nn/loss.h"
#include "nn/model.h"
#include "scalelab/model.h"

namespace scalelab {
namespace {

// Distinct initial weights per rank, as separate processes draw them.
constexpr std::uint64_t kRankSeedStride = 7919;

nn::Shape sample_shape(const Dataset& d) {
  const ImageShape s = d.shape();
  return nn::Shape{static_cast<std::size_t>(s.channels), static_cast<std::size_t>(s.height),
                   static_cast<std::size_t>(s.width)};
}

void check_batch(const Model& m, const Batch& b, std::size_t sample_elements, const char* function) {
  if (b.size() == 0 || b.images.size() != b.size() * sample_elements) {
    throw ApiError(std::string(function) + ": the batch holds " + std::to_string(b.labels.size()) + " labels and " +
                       std::to_string(b.images.size()) + " floats, not a whole non-empty batch for " + m.name() +
                       " (" + std::to_string(sample_elements) + " floats per sample): fill it with Dataset::fill",
                   2);
  }
}

}  // namespace

Model::Model(const std::string& name, const Dataset& dataset, std::uint64_t seed) {
  const int r = api::communicator("scalelab::Model").rank();
  impl_ = api::translated([&] {
    return nn::make_model(name, sample_shape(dataset), static_cast<std::size_t>(dataset.classes()),
                          seed + kRankSeedStride * static_cast<std::uint64_t>(r));
  });
  impl_->reseed(seed, static_cast<std::uint64_t>(r));  // ranks drop different units
}

Model::~Model() {
  if (!api::tracing()) return;
  try {
    api::trace("parameters", {{"when", "final"}, {"model", impl_->name()}, {"fingerprint", api::fingerprint_text(fingerprint())}});
  } catch (const std::exception&) {
    // A trace that cannot be written any more was already reported by the call that failed.
  }
}

BatchStats Model::train_batch(const Batch& batch, float grad_scale) {
  const std::size_t elements = impl_->input_shape().numel();
  check_batch(*this, batch, elements, "scalelab::Model::train_batch");
  const std::size_t n = batch.size();
  return api::translated([&] {
    const nn::ConstTensorView logits =
        impl_->forward({batch.images.data(), impl_->input_shape().with_batch(n)}, true);
    dlogits_.resize(n * impl_->num_classes());
    const nn::TensorView dlogits{dlogits_.data(), nn::Shape{n, impl_->num_classes()}};
    const nn::LossResult r = nn::softmax_cross_entropy(logits, std::span<const std::int32_t>(batch.labels), dlogits, grad_scale);
    impl_->backward(dlogits);
    return BatchStats{r.loss * static_cast<double>(n), static_cast<double>(r.correct), static_cast<double>(n)};
  });
}

BatchStats Model::evaluate_batch(const Batch& batch) {
  const std::size_t elements = impl_->input_shape().numel();
  check_batch(*this, batch, elements, "scalelab::Model::evaluate_batch");
  const std::size_t n = batch.size();
  return api::translated([&] {
    const nn::ConstTensorView logits =
        impl_->forward({batch.images.data(), impl_->input_shape().with_batch(n)}, false);
    const nn::LossResult r = nn::softmax_cross_entropy(logits, std::span<const std::int32_t>(batch.labels));
    return BatchStats{r.loss * static_cast<double>(n), static_cast<double>(r.correct), static_cast<double>(n)};
  });
}

void Model::zero_grad() { impl_->zero_grad(); }
const std::string& Model::name() const { return impl_->name(); }
std::size_t Model::parameter_count() const { return impl_->parameters().size(); }
std::span<const float> Model::parameters() const { return impl_->parameters().values(); }
std::span<const float> Model::gradients() const { return impl_->parameters().grads(); }
std::string Model::summary() const { return impl_->summary(); }

std::uint64_t Model::fingerprint() const {
  const std::span<const float> v = impl_->parameters().values();
  return comm::fingerprint(std::string_view(reinterpret_cast<const char*>(v.data()), v.size_bytes()));
}

const std::vector<std::string>& model_names() { return nn::model_names(); }

}  // namespace scalelab
