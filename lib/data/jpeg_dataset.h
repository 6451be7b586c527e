// The packed JPEG data set (docs/jpeg-dataset.md): a folder holding
//   images.bin     the JPEGs, one after another
//   index.bin      a 32-byte header ("SLJPGIDX", format version, count, width, height, channels,
//                  classes; little-endian uint32) then one 16-byte entry per sample (uint64 offset
//                  into images.bin, uint32 size, uint32 label)
//   manifest.json  the same figures for people and tools, plus how the set was made
// Made from an in-memory data set (Fashion-MNIST) by make_jpeg_dataset, upsampled with bilinear
// interpolation and, with `colour`, tinted and textured so that the JPEGs compress roughly as
// photographs do. Opened by JpegDataset, which checks the index against images.bin.
//
//   make_jpeg_dataset(fashion_train, {.size = 224, .quality = 90}, "fm-jpeg");
//   JpegDataset set("fm-jpeg");
//   std::span<const std::uint8_t> entry_bytes = ...;  // read by the loader (data/pipeline.h)
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "data/dataset.h"

namespace scalelab::data {

inline constexpr std::uint32_t kJpegIndexVersion = 1;
inline constexpr std::size_t kJpegIndexHeaderBytes = 32;
inline constexpr std::size_t kJpegIndexEntryBytes = 16;

struct JpegEntry {
  std::uint64_t offset = 0;  // into images.bin
  std::uint32_t size = 0;    // bytes
  std::uint32_t label = 0;
};

struct JpegIndex {
  std::uint32_t width = 0;
  std::uint32_t height = 0;
  std::uint32_t channels = 0;  // 1 or 3
  std::uint32_t classes = 0;
  std::vector<JpegEntry> entries;
};

// Parses index.bin's bytes; `path` names the file in errors. Throws an input error naming the file
// and what is wrong (short, bad magic, unknown version, impossible dimensions, an entry's label out
// of range or an empty entry, trailing bytes).
[[nodiscard]] JpegIndex parse_jpeg_index(std::span<const std::uint8_t> bytes, const std::string& path);
[[nodiscard]] std::vector<std::uint8_t> serialize_jpeg_index(const JpegIndex& index);
// An input error naming `images_path` and the first entry that runs past its `images_bytes`.
void check_jpeg_entries(const JpegIndex& index, std::uint64_t images_bytes, const std::string& images_path);

struct MakeJpegOptions {
  int size = 224;        // output width and height
  int quality = 90;      // JPEG quality, 1..100
  bool colour = false;   // RGB with a per-class tint and texture, else greyscale
  std::size_t limit = 0; // the first `limit` samples only; 0: all
  std::uint64_t seed = 42;
};

struct MakeJpegResult {
  std::size_t count = 0;
  std::uint64_t jpeg_bytes = 0;  // images.bin's size
};

// Writes the data set to folder `dir` (made if missing; its three files replaced).
MakeJpegResult make_jpeg_dataset(const InMemoryDataset& from, const MakeJpegOptions& options, const std::string& dir);
// The sample's pixels before encoding (what make_jpeg_dataset encodes): exposed for tests.
[[nodiscard]] std::vector<std::uint8_t> jpeg_source_pixels(const InMemoryDataset& from, std::size_t i,
                                                           const MakeJpegOptions& options);

// An opened data set: its index, and images.bin's path and size. The loader reads the bytes.
class JpegDataset {
 public:
  // Throws an input error naming the folder parameter "dataset" when `dir` or one of its files is
  // missing, and the file when one is malformed.
  explicit JpegDataset(const std::string& dir);
  [[nodiscard]] const std::string& dir() const { return dir_; }
  [[nodiscard]] const std::string& images_path() const { return images_path_; }
  [[nodiscard]] const JpegIndex& index() const { return index_; }
  [[nodiscard]] std::size_t size() const { return index_.entries.size(); }
  [[nodiscard]] ImageShape shape() const {
    return {static_cast<int>(index_.channels), static_cast<int>(index_.height), static_cast<int>(index_.width)};
  }

 private:
  std::string dir_;
  std::string images_path_;
  JpegIndex index_;
};

}  // namespace scalelab::data
