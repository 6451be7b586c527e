// A main() for the fuzz targets in builds without libFuzzer (GCC): runs the target once on every
// file of the folders (or files) given, so the seed corpus and every input that once crashed a
// parser are checked by the ordinary test run. A finding aborts, as it would under the fuzzer.
//
//   fuzz_idx_replay tests/fuzz/corpus/idx
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {

void replay(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: " << argv[0] << " CORPUS_FOLDER_OR_FILE...\n";
    return 2;
  }
  std::size_t n = 0;
  for (int i = 1; i < argc; ++i) {
    const std::filesystem::path p(argv[i]);
    if (std::filesystem::is_directory(p)) {
      for (const auto& e : std::filesystem::directory_iterator(p)) {
        if (e.is_regular_file()) {
          replay(e.path());
          ++n;
        }
      }
    } else {
      replay(p);
      ++n;
    }
  }
  if (n == 0) {
    std::cerr << argv[0] << ": no inputs found in the folders given\n";
    return 1;
  }
  std::cout << argv[0] << ": " << n << " inputs replayed, none failed\n";
  return 0;
}
