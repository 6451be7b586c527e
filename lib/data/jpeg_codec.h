// JPEG encoding and decoding through libjpeg-turbo's TurboJPEG API, the one image library scalelab
// uses. Pixels are interleaved bytes (1 channel: grey; 3: RGB), row after row.
//
//   std::vector<std::uint8_t> jpeg = encode_jpeg(pixels, {224, 224, 3}, 90);
//   JpegInfo info = read_jpeg_header(jpeg);                   // 224 x 224 x 3
//   Image img = decode_jpeg(jpeg, 3, JpegIdct::fast, 2);      // 112 x 112, decoded at 1/2 scale
//
// A codec that is not thread-safe is kept per thread (TurboJPEG handles are per thread). Every
// failure throws JpegError with libjpeg-turbo's message: the caller names the file and sample.
#pragma once
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace scalelab::data {

// libjpeg-turbo's inverse DCT: the accurate integer one, or the fast one (less exact, quicker).
enum class JpegIdct { accurate, fast };

struct JpegInfo {
  int width = 0;
  int height = 0;
  int channels = 0;  // 1 for a greyscale JPEG, 3 otherwise
};

struct Image {
  int width = 0;
  int height = 0;
  int channels = 0;
  std::vector<std::uint8_t> pixels;  // height * width * channels
};

// A JPEG libjpeg-turbo cannot read (not a JPEG, truncated, corrupt); the message says which.
class JpegError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Encodes `pixels` (info.height * info.width * info.channels bytes) at `quality` (1..100), with
// 4:2:0 chroma subsampling for colour and none for grey.
[[nodiscard]] std::vector<std::uint8_t> encode_jpeg(std::span<const std::uint8_t> pixels, const JpegInfo& info,
                                                    int quality);
[[nodiscard]] JpegInfo read_jpeg_header(std::span<const std::uint8_t> jpeg);
// The smallest of libjpeg-turbo's reduced scales (1/1, 1/2, 1/4, 1/8) that still gives at least
// `min_width` x `min_height` pixels of a `width` x `height` image: its denominator (1, 2, 4 or 8).
[[nodiscard]] int jpeg_scale_for(int width, int height, int min_width, int min_height);
// Decodes to `channels` (1 or 3) at 1/`scale` of the size (scale 1, 2, 4 or 8). A warning
// (a truncated stream, for one) is an error: a sample is decoded whole or not at all.
[[nodiscard]] Image decode_jpeg(std::span<const std::uint8_t> jpeg, int channels, JpegIdct idct, int scale = 1);
// The same into `out`, reusing its storage (the loader's workers decode this way).
void decode_jpeg_into(std::span<const std::uint8_t> jpeg, int channels, JpegIdct idct, int scale, Image& out);

}  // namespace scalelab::data
