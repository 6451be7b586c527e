// scalelab's public API, the models: the model zoo (the course's cnn, an mlp, a small resnet, a
// trivial linear model) built for a data set, trained one batch at a time.
//
//   scalelab::Model model("cnn", data.train, /*seed=*/42);
//   model.zero_grad();
//   scalelab::BatchStats s = model.train_batch(batch);   // forward, loss, backward (accumulates)
//   optimizer.step(lr);                                    // applies, then zeroes the gradients
//   scalelab::BatchStats e = model.evaluate_batch(test_batch);
//
// Like separate processes in any framework, each rank draws its own initial weights (from seed
// and rank) and its own Dropout masks: broadcast_from_rank0 (runtime.h) makes the weights equal.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "scalelab/data.h"

namespace scalelab {

namespace nn { class Model; }

// One batch's results: loss_sum / samples is the mean loss, correct / samples the accuracy.
struct BatchStats {
  double loss_sum = 0.0;
  double correct = 0.0;
  double samples = 0.0;
  BatchStats& operator+=(const BatchStats& o) {
    loss_sum += o.loss_sum;
    correct += o.correct;
    samples += o.samples;
    return *this;
  }
};

class Model {
 public:
  // `name` is one of model_names(); needs a live Runtime (the rank seeds the initial weights).
  Model(const std::string& name, const Dataset& dataset, std::uint64_t seed);
  ~Model();
  Model(const Model&) = delete;
  Model& operator=(const Model&) = delete;

  // Forward in training mode, softmax cross-entropy, backward: ADDS this batch's gradient, times
  // grad_scale, to the gradients (use 1/k when k batches make one step).
  BatchStats train_batch(const Batch& batch, float grad_scale = 1.0f);
  // Forward in inference mode and the loss; gradients untouched.
  BatchStats evaluate_batch(const Batch& batch);
  void zero_grad();

  [[nodiscard]] const std::string& name() const;
  [[nodiscard]] std::size_t parameter_count() const;
  [[nodiscard]] std::span<const float> parameters() const;
  [[nodiscard]] std::span<const float> gradients() const;
  // A 64-bit fingerprint of the parameters (equal on two ranks when they are bit-identical).
  [[nodiscard]] std::uint64_t fingerprint() const;
  // Keras' model.summary().
  [[nodiscard]] std::string summary() const;

  [[nodiscard]] nn::Model& impl() { return *impl_; }
  [[nodiscard]] const nn::Model& impl() const { return *impl_; }

 private:
  std::unique_ptr<nn::Model> impl_;
  std::vector<float> dlogits_;
};

[[nodiscard]] const std::vector<std::string>& model_names();

}  // namespace scalelab
