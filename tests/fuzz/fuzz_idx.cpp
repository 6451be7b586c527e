// Fuzz target: IDX files (data/idx.h), plain or gzipped (zlib reads both), as images and as labels.
#include "data/idx.h"
#include "fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = scalelab::fuzz::as_file(data, size, ".idx");
  scalelab::fuzz::expect_error_or_success([&] { (void)scalelab::data::read_idx_images(path); });
  scalelab::fuzz::expect_error_or_success([&] { (void)scalelab::data::read_idx_labels(path); });
  return 0;
}
