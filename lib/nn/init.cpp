// He and Glorot initialisation (see init.h).
#include "nn/init.h"

#include <algorithm>
#include <cmath>

namespace scalelab::nn {

void initialize(float* w, std::size_t n, Init init, std::size_t fan_in, std::size_t fan_out, Rng& rng) {
  switch (init) {
    case Init::zeros: std::fill_n(w, n, 0.0f); return;
    case Init::ones: std::fill_n(w, n, 1.0f); return;
    case Init::he_uniform:
    case Init::glorot_uniform: {
      double denom = init == Init::he_uniform ? double(fan_in) : double(fan_in + fan_out);
      float limit = static_cast<float>(std::sqrt(6.0 / std::max(denom, 1.0)));
      for (std::size_t i = 0; i < n; ++i) w[i] = rng.uniform(-limit, limit);
      return;
    }
  }
}

}  // namespace scalelab::nn
