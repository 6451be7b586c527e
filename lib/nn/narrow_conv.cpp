// Direct products for convolutions with few column rows (see narrow_conv.h). GCC/Clang vector
// types of the widest width the build targets: 16 floats with AVX-512, 8 with AVX.
#include "nn/narrow_conv.h"

#include <algorithm>
#include <cstring>

namespace scalelab::nn {
namespace {

#if defined(__AVX512F__)
constexpr std::size_t kVectorBytes = 64;
constexpr std::size_t kForwardFilters = 8;   // accumulators per column block: 8 of 32 registers
constexpr std::size_t kGradientFilters = 2;  // 2 x 16 rows of partial sums
constexpr bool kSupported = true;
#elif defined(__AVX__)
constexpr std::size_t kVectorBytes = 32;
constexpr std::size_t kForwardFilters = 4;   // 16 registers
constexpr std::size_t kGradientFilters = 1;
constexpr bool kSupported = true;
#else
constexpr std::size_t kVectorBytes = 16;
constexpr std::size_t kForwardFilters = 4;
constexpr std::size_t kGradientFilters = 1;
constexpr bool kSupported = false;
#endif

using Vec = float __attribute__((vector_size(kVectorBytes)));
constexpr std::size_t kLanes = kVectorBytes / sizeof(float);

inline Vec load(const float* p) {
  Vec v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
inline void store(float* p, Vec v) { std::memcpy(p, &v, sizeof v); }
inline Vec splat(float x) { return Vec{} + x; }

// kForwardFilters filters on kLanes pixels: the columns of row r read once for all of them.
inline void forward_block(std::size_t rows, std::size_t stride, const float* cols, const float (*w)[kNarrowConvMaxRows],
                          const float* bias, bool relu, float* out, std::size_t plane) {
  Vec acc[kForwardFilters];
  for (std::size_t j = 0; j < kForwardFilters; ++j) acc[j] = splat(bias[j]);
  for (std::size_t r = 0; r < rows; ++r) {
    const Vec c = load(cols + r * stride);
    for (std::size_t j = 0; j < kForwardFilters; ++j) acc[j] += splat(w[j][r]) * c;
  }
  const Vec zero{};
  for (std::size_t j = 0; j < kForwardFilters; ++j) store(out + j * plane, relu ? (acc[j] > zero ? acc[j] : zero) : acc[j]);
}

}  // namespace

bool narrow_conv_supported(std::size_t rows) { return kSupported && rows > 0 && rows <= kNarrowConvMaxRows; }

void narrow_conv_forward(std::size_t rows, std::size_t filters, std::size_t images, std::size_t plane,
                         const float* weights, const float* bias, const float* cols, bool relu, float* out) {
  const std::size_t stride = images * plane;  // floats per row of cols
  for (std::size_t b = 0; b < images; ++b) {
    const float* cb = cols + b * plane;
    for (std::size_t f0 = 0; f0 < filters; f0 += kForwardFilters) {
      const std::size_t fb = std::min(kForwardFilters, filters - f0);
      float w[kForwardFilters][kNarrowConvMaxRows] = {};
      float bs[kForwardFilters] = {};
      for (std::size_t j = 0; j < fb; ++j) {
        std::copy_n(weights + (f0 + j) * rows, rows, w[j]);
        bs[j] = bias != nullptr ? bias[f0 + j] : 0.0f;
      }
      float* ob = out + (b * filters + f0) * plane;
      std::size_t p = 0;
      if (fb == kForwardFilters)
        for (; p + kLanes <= plane; p += kLanes) forward_block(rows, stride, cb + p, w, bs, relu, ob + p, plane);
      for (; p < plane; ++p)  // the last pixels of each image, and a last group of fewer filters
        for (std::size_t j = 0; j < fb; ++j) {
          float a = bs[j];
          for (std::size_t r = 0; r < rows; ++r) a += w[j][r] * cb[r * stride + p];
          ob[j * plane + p] = relu ? std::max(a, 0.0f) : a;
        }
    }
  }
}

void narrow_conv_weight_gradient(std::size_t rows, std::size_t filters, std::size_t columns, const float* cols,
                                 const float* dz, float* dwt) {
  for (std::size_t f0 = 0; f0 < filters; f0 += kGradientFilters) {
    const std::size_t fw = std::min(kGradientFilters, filters - f0);
    Vec acc[kGradientFilters][kNarrowConvMaxRows];
    for (auto& per_filter : acc)
      for (Vec& a : per_filter) a = Vec{};
    std::size_t q = 0;
    if (fw == kGradientFilters)
      for (; q + kLanes <= columns; q += kLanes) {
        Vec d[kGradientFilters];
        for (std::size_t j = 0; j < kGradientFilters; ++j) d[j] = load(dz + (f0 + j) * columns + q);
        for (std::size_t r = 0; r < rows; ++r) {
          const Vec c = load(cols + r * columns + q);
          for (std::size_t j = 0; j < kGradientFilters; ++j) acc[j][r] += c * d[j];
        }
      }
    for (std::size_t j = 0; j < fw; ++j)
      for (std::size_t r = 0; r < rows; ++r) {
        float s = 0.0f;
        for (std::size_t l = 0; l < kLanes; ++l) s += acc[j][r][l];
        for (std::size_t t = q; t < columns; ++t) s += cols[r * columns + t] * dz[(f0 + j) * columns + t];
        dwt[r * filters + f0 + j] += s;
      }
  }
}

}  // namespace scalelab::nn
