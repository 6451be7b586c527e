// Finite-difference gradient checks for nn layers and models. The scalar checked is
// L = sum(out * R) for a fixed random R, accumulated in double; its gradient with respect to the
// output is R, so backward(dout = R) must give dL/din and dL/dparams. Central differences with
// step eps; the comparison is ||analytic - numeric|| / max(||analytic||, ||numeric||, tiny), which
// tolerates the float rounding in L but not a wrong formula. For piecewise-linear layers (ReLU,
// max pooling) a step can cross a kink, where the two one-sided differences disagree: with
// skip_kinks, such elements (at most a tenth of them) are left out of the comparison.
#pragma once
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

#include "core/rng.h"
#include "nn/layer.h"

namespace scalelab::nn::testing {

inline void fill_normal(float* x, std::size_t n, Rng& rng, float scale = 1.0f) {
  for (std::size_t i = 0; i < n; ++i) x[i] = rng.normal(0.0f, scale);
}

// Relative error between an analytic gradient and the central-difference one of loss() with
// respect to x[0..n); loss() must recompute from x.
inline bool g_skip_kinks = false;

// Relative error between analytic[k] and the central difference of loss() with respect to
// x[indices[k]], over all k; loss() must recompute from x.
// max_skipped: the fraction of kinks tolerated (a whole model crosses more of them than a layer).
inline double gradient_error_at(const std::function<double()>& loss, float* x, const std::vector<std::size_t>& indices,
                                const float* analytic, float eps, double max_skipped = 0.1) {
  double diff = 0, na = 0, nn = 0;
  std::size_t skipped = 0;
  const std::size_t n = indices.size();
  const double l0 = g_skip_kinks ? loss() : 0.0;
  // A kink matters when its jump is a visible fraction of the typical gradient element.
  double rms = 0;
  for (std::size_t k = 0; k < n; ++k) rms += double(analytic[k]) * analytic[k];
  rms = std::sqrt(rms / double(std::max<std::size_t>(n, 1)));
  for (std::size_t k = 0; k < n; ++k) {
    float& xi = x[indices[k]];
    const float saved = xi;
    xi = saved + eps;
    const double lp = loss();
    xi = saved - eps;
    const double lm = loss();
    xi = saved;
    const double numeric = (lp - lm) / (2.0 * double(eps));
    if (g_skip_kinks) {
      const double right = (lp - l0) / eps, left = (l0 - lm) / eps;
      if (std::abs(right - left) > 1e-2 * (std::abs(right) + std::abs(left) + rms) + 1e-6) {
        ++skipped;
        continue;
      }
    }
    diff += (analytic[k] - numeric) * (analytic[k] - numeric);
    na += double(analytic[k]) * analytic[k];
    nn += numeric * numeric;
  }
  if (std::getenv("SCALELAB_GRADCHECK_DEBUG")) std::fprintf(stderr, "gradient check: %zu of %zu skipped\n", skipped, n);
  // Too many kinks and the check says nothing: fail it (one skip is allowed even in tiny tensors).
  if (skipped == n || (skipped > 1 && double(skipped) > max_skipped * double(n))) return 1.0;
  return std::sqrt(diff) / std::max({std::sqrt(na), std::sqrt(nn), 1e-12});
}

inline double gradient_error(const std::function<double()>& loss, float* x, std::size_t n, const float* analytic,
                             float eps) {
  std::vector<std::size_t> all(n);
  for (std::size_t i = 0; i < n; ++i) all[i] = i;
  return gradient_error_at(loss, x, all, analytic, eps);
}

// Turns skip_kinks on for the scope (piecewise-linear layers).
struct SkipKinks {
  SkipKinks() { g_skip_kinks = true; }
  ~SkipKinks() { g_skip_kinks = false; }
  SkipKinks(const SkipKinks&) = delete;
  SkipKinks& operator=(const SkipKinks&) = delete;
};

// One layer with its own ParameterSet, input, output, R and gradients.
struct LayerHarness {
  Layer& layer;
  Shape in_shape;  // per sample
  std::size_t batch;
  bool training = true;
  ParameterSet params;
  Tensor in, out, r, din;
  std::function<void()> before_forward;  // e.g. reseed a Dropout so every forward draws the same mask

  LayerHarness(Layer& l, const Shape& s, std::size_t n, std::uint64_t seed = 1) : layer(l), in_shape(s), batch(n) {
    Shape os = layer.output_shape(s);
    layer.declare(params, "layer", s);
    params.finalize();
    Rng rng(seed, 7);
    layer.initialize(params, rng);
    // Perturb parameters away from their initial constants (BatchNorm gamma = 1, biases 0) so that
    // every parameter's gradient is exercised in general position.
    for (std::size_t i = 0; i < params.count(); ++i)
      for (std::size_t j = 0; j < params.info(i).size; ++j) params.value(i)[j] += rng.normal(0.0f, 0.2f);
    layer.reserve(s, n);
    in.resize(s.with_batch(n));
    out.resize(os.with_batch(n));
    r.resize(os.with_batch(n));
    din.resize(s.with_batch(n));
    fill_normal(in.data(), in.numel(), rng);
    fill_normal(r.data(), r.numel(), rng);
  }

  double loss() {
    if (before_forward) before_forward();
    layer.forward(in.view(), out.view(), training);
    double l = 0;
    for (std::size_t i = 0; i < out.numel(); ++i) l += double(out.data()[i]) * r.data()[i];
    return l;
  }
  // Forward then backward with dout = R: fills din and the parameter gradients (zeroed first).
  void backward() {
    params.zero_grad();
    loss();
    layer.backward(in.view(), out.view(), r.view(), din.view());
  }
  double input_error(float eps = 1e-2f) {
    backward();
    std::vector<float> analytic(din.data(), din.data() + din.numel());
    return gradient_error([this] { return loss(); }, in.data(), in.numel(), analytic.data(), eps);
  }
  double param_error(std::size_t index, float eps = 1e-2f) {
    backward();
    std::vector<float> analytic(params.grad(index), params.grad(index) + params.info(index).size);
    return gradient_error([this] { return loss(); }, params.value(index), params.info(index).size, analytic.data(), eps);
  }
  double worst_param_error(float eps = 1e-2f) {
    double worst = 0;
    for (std::size_t i = 0; i < params.count(); ++i) worst = std::max(worst, param_error(i, eps));
    return worst;
  }
};

}  // namespace scalelab::nn::testing
