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
#include <cstddef>
#include <cstdint>
#include <new>
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

// Storage for decoded pixels that always starts 16 bytes past a 64-byte boundary. libjpeg-turbo
// decoded into a 32-byte-aligned buffer about 12% slower than into one that is not (every other
// offset within 2% of each other; docs/jpeg-dataset.md, Decoding speed); with malloc's alignment, which depends on its history,
// each worker thread of a pipeline decoded at one speed or the other, by chance. A fixed placement
// makes every worker and every run decode alike.
template <class T>
struct DecodeAllocator {
  using value_type = T;
  static constexpr std::size_t kAlign = 64;
  static constexpr std::size_t kOffset = 16;
  DecodeAllocator() = default;
  template <class U>
  explicit DecodeAllocator(const DecodeAllocator<U>&) {}
  static_assert(alignof(T) <= kOffset, "the storage is only 16-byte aligned");
  T* allocate(std::size_t n) {
    auto* raw = static_cast<std::byte*>(::operator new(n * sizeof(T) + kOffset, std::align_val_t{kAlign}));
    return reinterpret_cast<T*>(raw + kOffset);
  }
  void deallocate(T* p, std::size_t) noexcept {
    ::operator delete(reinterpret_cast<std::byte*>(p) - kOffset, std::align_val_t{kAlign});
  }
  template <class U>
  bool operator==(const DecodeAllocator<U>&) const { return true; }
};
using PixelBuffer = std::vector<std::uint8_t, DecodeAllocator<std::uint8_t>>;

struct Image {
  int width = 0;
  int height = 0;
  int channels = 0;
  PixelBuffer pixels;  // height * width * channels
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
