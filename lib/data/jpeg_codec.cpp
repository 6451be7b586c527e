// JPEG through libjpeg-turbo's TurboJPEG API (see jpeg_codec.h).
#include "data/jpeg_codec.h"

#include <turbojpeg.h>

#include <memory>

namespace scalelab::data {
namespace {

struct HandleCloser {
  void operator()(void* h) const { tjDestroy(h); }
};
using Handle = std::unique_ptr<void, HandleCloser>;

// One compressor and one decompressor per thread, made on first use.
tjhandle thread_decompressor() {
  thread_local Handle h(tjInitDecompress());
  if (!h) throw JpegError(std::string("libjpeg-turbo: cannot make a decompressor: ") + tjGetErrorStr2(nullptr));
  return h.get();
}
tjhandle thread_compressor() {
  thread_local Handle h(tjInitCompress());
  if (!h) throw JpegError(std::string("libjpeg-turbo: cannot make a compressor: ") + tjGetErrorStr2(nullptr));
  return h.get();
}

int pixel_format(int channels) {
  if (channels == 1) return TJPF_GRAY;
  if (channels == 3) return TJPF_RGB;
  throw std::invalid_argument("JPEG pixels have 1 or 3 channels, not " + std::to_string(channels));
}

}  // namespace

std::vector<std::uint8_t> encode_jpeg(std::span<const std::uint8_t> pixels, const JpegInfo& info, int quality) {
  const auto expected = static_cast<std::size_t>(info.width) * static_cast<std::size_t>(info.height) *
                        static_cast<std::size_t>(info.channels);
  if (info.width <= 0 || info.height <= 0 || pixels.size() != expected) {
    throw std::invalid_argument("encode_jpeg: " + std::to_string(pixels.size()) + " bytes for " +
                                std::to_string(info.width) + "x" + std::to_string(info.height) + "x" +
                                std::to_string(info.channels));
  }
  tjhandle h = thread_compressor();
  unsigned char* out = nullptr;
  unsigned long size = 0;
  const int subsampling = info.channels == 1 ? TJSAMP_GRAY : TJSAMP_420;
  if (tjCompress2(h, pixels.data(), info.width, 0, info.height, pixel_format(info.channels), &out, &size,
                  subsampling, quality, TJFLAG_ACCURATEDCT) != 0) {
    if (out) tjFree(out);
    throw JpegError(std::string("libjpeg-turbo cannot encode: ") + tjGetErrorStr2(h));
  }
  std::vector<std::uint8_t> jpeg(out, out + size);
  tjFree(out);
  return jpeg;
}

JpegInfo read_jpeg_header(std::span<const std::uint8_t> jpeg) {
  tjhandle h = thread_decompressor();
  int w = 0;
  int ht = 0;
  int subsampling = 0;
  int colourspace = 0;
  if (jpeg.empty() || tjDecompressHeader3(h, jpeg.data(), static_cast<unsigned long>(jpeg.size()), &w, &ht,
                                          &subsampling, &colourspace) != 0) {
    throw JpegError(jpeg.empty() ? std::string("empty, not a JPEG") : std::string("not a JPEG: ") + tjGetErrorStr2(h));
  }
  return JpegInfo{w, ht, colourspace == TJCS_GRAY ? 1 : 3};
}

int jpeg_scale_for(int width, int height, int min_width, int min_height) {
  int best = 1;
  for (int d : {2, 4, 8}) {
    const tjscalingfactor f{1, d};
    if (TJSCALED(width, f) >= min_width && TJSCALED(height, f) >= min_height) best = d;
  }
  return best;
}

void decode_jpeg_into(std::span<const std::uint8_t> jpeg, int channels, JpegIdct idct, int scale, Image& out) {
  if (scale != 1 && scale != 2 && scale != 4 && scale != 8) {
    throw std::invalid_argument("decode_jpeg: scale 1/" + std::to_string(scale) + " is not 1/1, 1/2, 1/4 or 1/8");
  }
  const JpegInfo info = read_jpeg_header(jpeg);
  const tjscalingfactor f{1, scale};
  out.width = TJSCALED(info.width, f);
  out.height = TJSCALED(info.height, f);
  out.channels = channels;
  out.pixels.resize(static_cast<std::size_t>(out.width) * static_cast<std::size_t>(out.height) *
                    static_cast<std::size_t>(channels));
  tjhandle h = thread_decompressor();
  const int flags = (idct == JpegIdct::fast ? TJFLAG_FASTDCT : TJFLAG_ACCURATEDCT) | TJFLAG_STOPONWARNING;
  if (tjDecompress2(h, jpeg.data(), static_cast<unsigned long>(jpeg.size()), out.pixels.data(), out.width, 0,
                    out.height, pixel_format(channels), flags) != 0) {
    throw JpegError(std::string("libjpeg-turbo cannot decode it: ") + tjGetErrorStr2(h));
  }
}

Image decode_jpeg(std::span<const std::uint8_t> jpeg, int channels, JpegIdct idct, int scale) {
  Image img;
  decode_jpeg_into(jpeg, channels, idct, scale, img);
  return img;
}

}  // namespace scalelab::data
