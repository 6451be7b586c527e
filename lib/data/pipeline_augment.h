// The loader's augmentations, as pure functions of (seed, stream position): the same sample gets
// the same crop, flip, rotation and jitter whichever worker handles it.
//   simple   a random crop of the output size, and a horizontal flip half the time; pixels / 255
//   complex  a random-resized crop (8%..100% of the area, aspect 3/4..4/3) resized to the output
//            size, rotated by up to +-15 degrees (bilinear sampling, edges clamped), flipped half
//            the time; brightness, contrast and saturation jitter (factors 0.6..1.4); then
//            normalised per channel with ImageNet's mean and standard deviation (grey: their means)
//
//   const AugmentParams p = augment_params(Augment::complex, seed, position, 224, 224, 196);
//   const int scale = p.decode_scale;              // decode at 1/scale: the crop still covers 196
//   augment_into(p, decoded_image, out /* channels*196*196 floats, CHW */);
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "data/jpeg_codec.h"

namespace scalelab::data {

enum class Augment { simple, complex };
[[nodiscard]] std::string name_of(Augment a);  // "simple", "complex"

struct AugmentParams {
  Augment kind = Augment::simple;
  int out = 0;                      // output width and height
  int crop_x = 0, crop_y = 0;       // the crop, in full-size image pixels
  int crop_w = 0, crop_h = 0;
  int decode_scale = 1;             // decode at 1/decode_scale: the crop then still spans >= out pixels
  bool flip = false;
  double angle = 0;                 // radians (complex only)
  double brightness = 1, contrast = 1, saturation = 1;  // complex only
};

// The parameters of the sample at stream position `position` for an image of `width` x `height`
// and an output of `out` x `out` (out <= width and height).
[[nodiscard]] AugmentParams augment_params(Augment kind, std::uint64_t seed, std::uint64_t position, int width,
                                           int height, int out);
// The same transform without chance, as evaluation applies it: the centred out x out crop, no
// flip, no rotation or jitter; `kind` keeps its output scale (simple: pixels / 255; complex:
// normalised as in training).
[[nodiscard]] AugmentParams centre_params(Augment kind, int width, int height, int out);
// Writes image.channels * out * out floats (channel planes, row after row) into `chw`. `image` is
// the sample decoded at 1/p.decode_scale.
void augment_into(const AugmentParams& p, const Image& image, float* chw);

}  // namespace scalelab::data
