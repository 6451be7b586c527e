// Dense forward and backward as three products over the batch (see dense.h).
#include "nn/dense.h"

#include <algorithm>

#include "nn/blas.h"

namespace scalelab::nn {

Dense::Dense(std::size_t units, Activation activation, Init init) : units_(units), activation_(activation), init_(init) {
  if (units == 0) throw_usage("Dense: the number of units must be at least 1");
}

Shape Dense::output_shape(const Shape& in) const {
  if (in.rank() != 1) throw_usage("Dense needs flat (features) inputs, got " + in.str() + ": add a Flatten before it");
  return {units_};
}

void Dense::declare(ParameterSet& params, const std::string& name, const Shape& in) {
  params_ = &params;
  inputs_ = in[0];
  w_ = params.add(name + ".weight", Shape{units_, inputs_}, ParamKind::weight);
  b_ = params.add(name + ".bias", Shape{units_}, ParamKind::bias);
}

void Dense::initialize(ParameterSet& params, Rng& rng) {
  nn::initialize(params.value(w_), units_ * inputs_, init_, inputs_, units_, rng);
  std::fill_n(params.value(b_), units_, 0.0f);
}

void Dense::reserve(const Shape& /*in_shape*/, std::size_t max_batch) { dz_.resize(Shape{max_batch, units_}); }

FlopCount Dense::flops(const Shape& /*in*/) const {
  double macs = double(units_) * double(inputs_);
  return {2 * macs, 2 * macs, 2 * macs};
}

void Dense::forward(ConstTensorView in, TensorView out, bool /*training*/) {
  const int n = static_cast<int>(in.batch()), u = static_cast<int>(units_), k = static_cast<int>(inputs_);
  sgemm(false, true, n, u, k, 1.0f, in.data, k, params_->value(w_), k, 0.0f, out.data, u);
  const float* b = params_->value(b_);
  const bool relu = activation_ == Activation::relu;
  for (std::size_t i = 0; i < in.batch(); ++i) {
    float* row = out.data + i * units_;
    if (relu) {
      for (std::size_t j = 0; j < units_; ++j) row[j] = std::max(row[j] + b[j], 0.0f);
    } else {
      for (std::size_t j = 0; j < units_; ++j) row[j] += b[j];
    }
  }
}

void Dense::backward(ConstTensorView in, ConstTensorView out, ConstTensorView dout, TensorView din) {
  const int n = static_cast<int>(in.batch()), u = static_cast<int>(units_), k = static_cast<int>(inputs_);
  float* dz = dz_.data();
  activation_backward(activation_, out.data, dout.data, dz, in.batch() * units_);
  float* db = params_->grad(b_);
  for (std::size_t i = 0; i < in.batch(); ++i)
    for (std::size_t j = 0; j < units_; ++j) db[j] += dz[i * units_ + j];
  // dW += dZ^T X: (units x batch) by (batch x inputs).
  sgemm(true, false, u, k, n, 1.0f, dz, u, in.data, k, 1.0f, params_->grad(w_), k);
  if (din.empty()) return;
  // dX = dZ W: (batch x units) by (units x inputs).
  sgemm(false, false, n, k, u, 1.0f, dz, u, params_->value(w_), k, 0.0f, din.data, k);
}

}  // namespace scalelab::nn
