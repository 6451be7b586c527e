// IDX files (the MNIST format, http://yann.lecun.com/exdb/mnist/): a big-endian header (magic
// 0x00000803 for uint8 images N x rows x cols, 0x00000801 for uint8 labels N), then the bytes.
// Files may be gzipped or not (zlib reads both). Every problem is an input error naming the file
// and what is wrong: missing, not IDX (bad magic), truncated, or trailing bytes.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace scalelab::data {

struct IdxImages {
  std::uint32_t count = 0;
  std::uint32_t rows = 0;
  std::uint32_t cols = 0;
  std::vector<std::uint8_t> pixels;  // count * rows * cols bytes
};

[[nodiscard]] IdxImages read_idx_images(const std::string& path);
[[nodiscard]] std::vector<std::uint8_t> read_idx_labels(const std::string& path);

// Writers (uncompressed, or gzipped when `gzip`), used by tests and to export fixtures.
void write_idx_images(const std::string& path, const IdxImages& images, bool gzip);
void write_idx_labels(const std::string& path, const std::vector<std::uint8_t>& labels, bool gzip);

}  // namespace scalelab::data
