// The loader's augmentations (see pipeline_augment.h).
#include "data/pipeline_augment.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <numbers>

namespace scalelab::data {
namespace {

// splitmix64 over (seed, position, draw): independent uniform numbers in [0, 1).
double draw(std::uint64_t seed, std::uint64_t position, std::uint64_t k) {
  std::uint64_t x = seed * 0x9e3779b97f4a7c15ULL ^ (position + 1) * 0xd1b54a32d192ed03ULL ^ (k + 1) * 0x8cb92ba72f3d8dd7ULL;
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return static_cast<double>(x >> 11) * 0x1.0p-53;
}

constexpr std::array<float, 3> kMean{0.485f, 0.456f, 0.406f};
constexpr std::array<float, 3> kStd{0.229f, 0.224f, 0.225f};
constexpr float kGreyMean = (kMean[0] + kMean[1] + kMean[2]) / 3;
constexpr float kGreyStd = (kStd[0] + kStd[1] + kStd[2]) / 3;

}  // namespace

std::string name_of(Augment a) { return a == Augment::simple ? "simple" : "complex"; }

AugmentParams augment_params(Augment kind, std::uint64_t seed, std::uint64_t position, int width, int height, int out) {
  AugmentParams p;
  p.kind = kind;
  p.out = out;
  p.flip = draw(seed, position, 0) < 0.5;
  if (kind == Augment::simple) {
    p.crop_w = p.crop_h = out;
    p.crop_x = static_cast<int>(draw(seed, position, 1) * (width - out + 1));
    p.crop_y = static_cast<int>(draw(seed, position, 2) * (height - out + 1));
    return p;
  }
  // Random-resized crop: up to ten tries at an area and an aspect that fit, else the whole image.
  p.crop_x = 0;
  p.crop_y = 0;
  p.crop_w = width;
  p.crop_h = height;
  const double area = static_cast<double>(width) * height;
  for (std::uint64_t t = 0; t < 10; ++t) {
    const double a = area * (0.08 + 0.92 * draw(seed, position, 10 + 4 * t));
    const double aspect = std::exp(std::log(3.0 / 4) + (std::log(4.0 / 3) - std::log(3.0 / 4)) * draw(seed, position, 11 + 4 * t));
    const int w = static_cast<int>(std::lround(std::sqrt(a * aspect)));
    const int h = static_cast<int>(std::lround(std::sqrt(a / aspect)));
    if (w < 1 || h < 1 || w > width || h > height) continue;
    p.crop_w = w;
    p.crop_h = h;
    p.crop_x = static_cast<int>(draw(seed, position, 12 + 4 * t) * (width - w + 1));
    p.crop_y = static_cast<int>(draw(seed, position, 13 + 4 * t) * (height - h + 1));
    break;
  }
  p.decode_scale = jpeg_scale_for(p.crop_w, p.crop_h, out, out);
  p.angle = (draw(seed, position, 3) * 30 - 15) * std::numbers::pi / 180;
  p.brightness = 0.6 + 0.8 * draw(seed, position, 4);
  p.contrast = 0.6 + 0.8 * draw(seed, position, 5);
  p.saturation = 0.6 + 0.8 * draw(seed, position, 6);
  return p;
}

AugmentParams centre_params(Augment kind, int width, int height, int out) {
  AugmentParams p;
  p.kind = kind;
  p.out = out;
  p.crop_w = p.crop_h = out;
  p.crop_x = (width - out) / 2;
  p.crop_y = (height - out) / 2;
  return p;
}

void augment_into(const AugmentParams& p, const Image& img, float* chw) {
  const int n = p.out;
  const int c = img.channels;
  const std::size_t plane = static_cast<std::size_t>(n) * static_cast<std::size_t>(n);
  const auto px = [&](int y, int x, int ch) {
    return img.pixels[(static_cast<std::size_t>(y) * static_cast<std::size_t>(img.width) + static_cast<std::size_t>(x)) *
                          static_cast<std::size_t>(c) +
                      static_cast<std::size_t>(ch)];
  };
  if (p.kind == Augment::simple) {
    for (int y = 0; y < n; ++y) {
      for (int x = 0; x < n; ++x) {
        const int sx = p.crop_x + (p.flip ? n - 1 - x : x);
        for (int ch = 0; ch < c; ++ch) {
          chw[static_cast<std::size_t>(ch) * plane + static_cast<std::size_t>(y * n + x)] =
              static_cast<float>(px(p.crop_y + y, sx, ch)) / 255.0f;
        }
      }
    }
    return;
  }
  // Complex: output pixel -> crop (rotated about its centre, scaled, flipped) -> decoded pixel.
  const double s = p.decode_scale;
  const double cx = (p.crop_x + p.crop_w / 2.0) / s;
  const double cy = (p.crop_y + p.crop_h / 2.0) / s;
  const double kx = p.crop_w / s / n;
  const double ky = p.crop_h / s / n;
  const double ca = std::cos(p.angle);
  const double sa = std::sin(p.angle);
  std::array<float, 3> v{};
  for (int y = 0; y < n; ++y) {
    for (int x = 0; x < n; ++x) {
      const double u = ((p.flip ? n - 1 - x : x) + 0.5 - n / 2.0) * kx;
      const double w = (y + 0.5 - n / 2.0) * ky;
      const double fx = std::clamp(cx + ca * u - sa * w - 0.5, 0.0, img.width - 1.0);
      const double fy = std::clamp(cy + sa * u + ca * w - 0.5, 0.0, img.height - 1.0);
      const int x0 = static_cast<int>(fx);
      const int y0 = static_cast<int>(fy);
      const int x1 = std::min(x0 + 1, img.width - 1);
      const int y1 = std::min(y0 + 1, img.height - 1);
      const double ax = fx - x0;
      const double ay = fy - y0;
      for (int ch = 0; ch < c; ++ch) {
        const double top = (1 - ax) * px(y0, x0, ch) + ax * px(y0, x1, ch);
        const double bottom = (1 - ax) * px(y1, x0, ch) + ax * px(y1, x1, ch);
        // Brightness, then contrast about mid-grey.
        const double b = ((1 - ay) * top + ay * bottom) / 255.0 * p.brightness;
        v[static_cast<std::size_t>(ch)] = static_cast<float>((b - 0.5) * p.contrast + 0.5);
      }
      const std::size_t at = static_cast<std::size_t>(y * n + x);
      if (c == 3) {
        const float grey = 0.299f * v[0] + 0.587f * v[1] + 0.114f * v[2];
        for (std::size_t ch = 0; ch < 3; ++ch) {
          const float sat = grey + (v[ch] - grey) * static_cast<float>(p.saturation);
          chw[ch * plane + at] = (std::clamp(sat, 0.0f, 1.0f) - kMean[ch]) / kStd[ch];
        }
      } else {
        chw[at] = (std::clamp(v[0], 0.0f, 1.0f) - kGreyMean) / kGreyStd;
      }
    }
  }
}

}  // namespace scalelab::data
