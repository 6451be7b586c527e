// Writes a small MNIST-format dataset for the end-to-end tests: make_idx_fixture DIR TRAIN TEST [SIDE]
// writes DIR/{train,t10k}-{images-idx3,labels-idx1}-ubyte.gz with TRAIN and TEST samples of
// SIDE x SIDE (28 unless given), labels cycling through 0..9. The tests then corrupt copies of it.
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>

#include "data/idx.h"

namespace {

void write_split(const std::string& dir, const std::string& prefix, std::uint32_t n, std::uint32_t side) {
  scalelab::data::IdxImages img{n, side, side, {}};
  img.pixels.resize(std::size_t{n} * side * side);
  for (std::size_t i = 0; i < img.pixels.size(); ++i) img.pixels[i] = static_cast<std::uint8_t>((i * 31) % 251);
  std::vector<std::uint8_t> labels(n);
  for (std::uint32_t i = 0; i < n; ++i) labels[i] = static_cast<std::uint8_t>(i % 10);
  scalelab::data::write_idx_images(dir + "/" + prefix + "-images-idx3-ubyte.gz", img, true);
  scalelab::data::write_idx_labels(dir + "/" + prefix + "-labels-idx1-ubyte.gz", labels, true);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4 && argc != 5) {
    std::cerr << "usage: make_idx_fixture DIR TRAIN TEST [SIDE]\n";
    return 2;
  }
  const auto side = static_cast<std::uint32_t>(argc == 5 ? std::atoi(argv[4]) : 28);
  std::filesystem::create_directories(argv[1]);
  write_split(argv[1], "train", static_cast<std::uint32_t>(std::atoi(argv[2])), side);
  write_split(argv[1], "t10k", static_cast<std::uint32_t>(std::atoi(argv[3])), side);
  return 0;
}
