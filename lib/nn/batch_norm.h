// BatchNorm over channels: (C, H, W) inputs (BatchNorm2d) or (C) inputs (BatchNorm1d), PyTorch's
// semantics: training normalises with the batch mean and biased variance and updates running
// statistics with momentum 0.1 and the unbiased variance; evaluation uses the running statistics.
// gamma (norm_scale) and beta (norm_shift) are trainable; running mean/var live in the
// ParameterSet's non-trainable state.
//
// SyncBatchNorm hook: set_statistics_reducer(f). In a training forward f(sums, 2C+1) receives
// [sum x per channel (C), sum x^2 per channel (C), element count per channel (1)] over the local
// batch and must replace them with their sums over all ranks; in backward f(sums, 2C) receives
// [sum dy (C), sum dy*xhat (C)] likewise. With no reducer the statistics are the local batch's.
#pragma once
#include <vector>

#include "nn/layer.h"

namespace scalelab::nn {

class BatchNorm final : public Layer {
 public:
  explicit BatchNorm(float momentum = 0.1f, float eps = 1e-5f);
  [[nodiscard]] std::string type() const override { return "BatchNormalization"; }
  [[nodiscard]] Shape output_shape(const Shape& in) const override;
  void declare(ParameterSet& params, const std::string& name, const Shape& in) override;
  void initialize(ParameterSet& params, Rng& rng) override;
  void reserve(const Shape& in_shape, std::size_t max_batch) override;
  void forward(ConstTensorView in, TensorView out, bool training) override;
  void backward(ConstTensorView in, ConstTensorView out, ConstTensorView dout, TensorView din) override;
  [[nodiscard]] FlopCount flops(const Shape& in) const override;
  [[nodiscard]] std::size_t parameter_count() const override { return 2 * channels_; }
  void set_statistics_reducer(const StatisticsReducer& reducer) override { reducer_ = reducer; }
  [[nodiscard]] bool uses_batch_statistics() const override { return true; }
  [[nodiscard]] std::vector<std::size_t> parameter_ids() const override { return {gamma_, beta_}; }
  // For other engines (gpu/): the running statistics' ParameterSet::state() indices (mean, then
  // variance) and the constants.
  [[nodiscard]] std::size_t running_mean_id() const { return mean_; }
  [[nodiscard]] std::size_t running_var_id() const { return var_; }
  [[nodiscard]] float momentum() const { return momentum_; }
  [[nodiscard]] float eps() const { return eps_; }

 private:
  float momentum_, eps_;
  std::size_t channels_ = 0, spatial_ = 1;
  ParameterSet* params_ = nullptr;
  std::size_t gamma_ = 0, beta_ = 0, mean_ = 0, var_ = 0;
  StatisticsReducer reducer_;
  bool last_training_ = false;
  double count_ = 0;            // elements per channel in the (global) batch of the last forward
  std::vector<float> xhat_;     // normalised input of the last forward
  std::vector<float> inv_std_;  // per channel, of the last forward
  std::vector<float> sums_;     // scratch for the reducer: 2C+1 floats
  std::vector<double> acc_;     // scratch: per-channel double accumulators
};

}  // namespace scalelab::nn
