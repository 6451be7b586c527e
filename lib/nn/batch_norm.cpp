// BatchNorm forward and backward, with the synchronised-statistics hook (see batch_norm.h).
// Sums are accumulated in double per channel so that E[x^2] - E[x]^2 keeps float accuracy.
#include "nn/batch_norm.h"

#include <algorithm>
#include <cmath>

namespace scalelab::nn {

BatchNorm::BatchNorm(float momentum, float eps) : momentum_(momentum), eps_(eps) {}

Shape BatchNorm::output_shape(const Shape& in) const {
  if (in.rank() != 1 && in.rank() != 3) throw_usage("BatchNormalization needs (C) or (C, H, W) inputs, got " + in.str());
  return in;
}

void BatchNorm::declare(ParameterSet& params, const std::string& name, const Shape& in) {
  params_ = &params;
  channels_ = in[0];
  spatial_ = in.rank() == 3 ? in[1] * in[2] : 1;
  gamma_ = params.add(name + ".weight", Shape{channels_}, ParamKind::norm_scale);
  beta_ = params.add(name + ".bias", Shape{channels_}, ParamKind::norm_shift);
  mean_ = params.add_state(name + ".running_mean", channels_);
  var_ = params.add_state(name + ".running_var", channels_);
}

void BatchNorm::initialize(ParameterSet& params, Rng& /*rng*/) {
  std::fill_n(params.value(gamma_), channels_, 1.0f);
  std::fill_n(params.value(beta_), channels_, 0.0f);
  std::fill_n(params.state(mean_), channels_, 0.0f);
  std::fill_n(params.state(var_), channels_, 1.0f);
}

void BatchNorm::reserve(const Shape& in_shape, std::size_t max_batch) {
  xhat_.assign(max_batch * in_shape.numel(), 0.0f);
  inv_std_.assign(channels_, 0.0f);
  sums_.assign(2 * channels_ + 1, 0.0f);
  acc_.assign(2 * channels_, 0.0);
}

FlopCount BatchNorm::flops(const Shape& in) const {
  double n = double(in.numel());
  return {4 * n, 4 * n, 6 * n};
}

void BatchNorm::forward(ConstTensorView in, TensorView out, bool training) {
  const std::size_t n = in.batch(), c = channels_, s = spatial_;
  const float* gamma = params_->value(gamma_);
  const float* beta = params_->value(beta_);
  float* rmean = params_->state(mean_);
  float* rvar = params_->state(var_);
  last_training_ = training;
  if (!training) {
    for (std::size_t ch = 0; ch < c; ++ch) inv_std_[ch] = 1.0f / std::sqrt(rvar[ch] + eps_);
    for (std::size_t b = 0; b < n; ++b)
      for (std::size_t ch = 0; ch < c; ++ch) {
        const std::size_t at = (b * c + ch) * s;
        for (std::size_t i = 0; i < s; ++i) {
          float xh = (in.data[at + i] - rmean[ch]) * inv_std_[ch];
          xhat_[at + i] = xh;
          out.data[at + i] = gamma[ch] * xh + beta[ch];
        }
      }
    return;
  }
  std::fill(acc_.begin(), acc_.end(), 0.0);
  for (std::size_t b = 0; b < n; ++b)
    for (std::size_t ch = 0; ch < c; ++ch) {
      const float* x = in.data + (b * c + ch) * s;
      double s1 = 0, s2 = 0;
      for (std::size_t i = 0; i < s; ++i) {
        s1 += x[i];
        s2 += double(x[i]) * x[i];
      }
      acc_[ch] += s1;
      acc_[c + ch] += s2;
    }
  count_ = double(n * s);
  if (reducer_) {
    for (std::size_t i = 0; i < 2 * c; ++i) sums_[i] = static_cast<float>(acc_[i]);
    sums_[2 * c] = static_cast<float>(count_);
    reducer_(sums_.data(), 2 * c + 1);
    for (std::size_t i = 0; i < 2 * c; ++i) acc_[i] = sums_[i];
    count_ = sums_[2 * c];
  }
  for (std::size_t ch = 0; ch < c; ++ch) {
    double mean = acc_[ch] / count_;
    double var = std::max(acc_[c + ch] / count_ - mean * mean, 0.0);
    inv_std_[ch] = static_cast<float>(1.0 / std::sqrt(var + eps_));
    double unbiased = count_ > 1 ? var * count_ / (count_ - 1) : var;
    rmean[ch] = static_cast<float>((1 - momentum_) * rmean[ch] + momentum_ * mean);
    rvar[ch] = static_cast<float>((1 - momentum_) * rvar[ch] + momentum_ * unbiased);
    acc_[ch] = mean;  // keep the mean for the normalisation below
  }
  for (std::size_t b = 0; b < n; ++b)
    for (std::size_t ch = 0; ch < c; ++ch) {
      const std::size_t at = (b * c + ch) * s;
      const float mean = static_cast<float>(acc_[ch]), is = inv_std_[ch];
      for (std::size_t i = 0; i < s; ++i) {
        float xh = (in.data[at + i] - mean) * is;
        xhat_[at + i] = xh;
        out.data[at + i] = gamma[ch] * xh + beta[ch];
      }
    }
}

void BatchNorm::backward(ConstTensorView in, ConstTensorView /*out*/, ConstTensorView dout, TensorView din) {
  const std::size_t n = in.batch(), c = channels_, s = spatial_;
  const float* gamma = params_->value(gamma_);
  float* dgamma = params_->grad(gamma_);
  float* dbeta = params_->grad(beta_);
  std::fill(acc_.begin(), acc_.end(), 0.0);
  for (std::size_t b = 0; b < n; ++b)
    for (std::size_t ch = 0; ch < c; ++ch) {
      const std::size_t at = (b * c + ch) * s;
      double sd = 0, sdx = 0;
      for (std::size_t i = 0; i < s; ++i) {
        sd += dout.data[at + i];
        sdx += double(dout.data[at + i]) * xhat_[at + i];
      }
      acc_[ch] += sd;
      acc_[c + ch] += sdx;
    }
  // Parameter gradients are the local sums (the distributed optimizer averages them).
  for (std::size_t ch = 0; ch < c; ++ch) {
    dbeta[ch] += static_cast<float>(acc_[ch]);
    dgamma[ch] += static_cast<float>(acc_[c + ch]);
  }
  if (din.empty()) return;
  if (!last_training_) {
    for (std::size_t b = 0; b < n; ++b)
      for (std::size_t ch = 0; ch < c; ++ch) {
        const std::size_t at = (b * c + ch) * s;
        const float k = gamma[ch] * inv_std_[ch];
        for (std::size_t i = 0; i < s; ++i) din.data[at + i] = k * dout.data[at + i];
      }
    return;
  }
  if (reducer_) {
    for (std::size_t i = 0; i < 2 * c; ++i) sums_[i] = static_cast<float>(acc_[i]);
    reducer_(sums_.data(), 2 * c);
    for (std::size_t i = 0; i < 2 * c; ++i) acc_[i] = sums_[i];
  }
  // dx = gamma * inv_std * (dy - mean(dy) - xhat * mean(dy * xhat)), means over the whole batch.
  for (std::size_t b = 0; b < n; ++b)
    for (std::size_t ch = 0; ch < c; ++ch) {
      const std::size_t at = (b * c + ch) * s;
      const float k = gamma[ch] * inv_std_[ch];
      const float md = static_cast<float>(acc_[ch] / count_), mdx = static_cast<float>(acc_[c + ch] / count_);
      for (std::size_t i = 0; i < s; ++i) din.data[at + i] = k * (dout.data[at + i] - md - xhat_[at + i] * mdx);
    }
}

}  // namespace scalelab::nn
