// Fuzz target: the JPEG data set's index.bin (data/jpeg_dataset.h), parsed and then checked against
// an images.bin of the size its first four bytes give (so entries running past it are reached).
#include "data/jpeg_dataset.h"
#include "fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  scalelab::fuzz::expect_error_or_success([&] {
    const auto index = scalelab::data::parse_jpeg_index({data, size}, "index.bin");
    std::uint64_t images_bytes = 0;
    for (std::size_t i = 0; i < 4 && i < size; ++i) images_bytes = images_bytes << 8 | data[i];
    scalelab::data::check_jpeg_entries(index, images_bytes, "images.bin");
  });
  return 0;
}
