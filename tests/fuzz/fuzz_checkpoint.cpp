// Fuzz target: checkpoints (train/checkpoint.h) loaded into the trivial model with Adam. The last 8
// bytes of a checkpoint are an FNV-1a checksum of the rest; the target writes the right checksum
// over them (inputs of 8 bytes or more) so that the fuzzer reaches the header and the sizes
// instead of stopping at the checksum. Shorter inputs go in as they are.
#include <cstring>
#include <vector>

#include "fuzz_input.h"
#include "nn/model.h"
#include "optim/factory.h"
#include "train/checkpoint.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::vector<std::uint8_t> bytes(data, data + size);
  if (bytes.size() >= 8) {
    std::uint64_t h = 0xcbf29ce484222325ull;
    for (std::size_t i = 0; i < bytes.size() - 8; ++i) h = (h ^ bytes[i]) * 0x100000001b3ull;
    std::memcpy(bytes.data() + bytes.size() - 8, &h, 8);
  }
  const std::string path = scalelab::fuzz::as_file(bytes.data(), bytes.size(), ".ckpt");
  static auto model = scalelab::nn::make_model("trivial", scalelab::nn::Shape{1, 2, 2}, 2, 1);
  static auto opt = scalelab::optim::make_optimizer("adam", {});
  scalelab::fuzz::expect_error_or_success(
      [&] { (void)scalelab::train::load_checkpoint(path, "trivial", model->parameters(), *opt); });
  return 0;
}
