// What every fuzz target shares: the bytes libFuzzer hands over as a file (for parsers that read
// a path), and the rule that a parser either succeeds or throws scalelab::Error. Any other
// exception escapes the target and libFuzzer reports it, as it does crashes, leaks, undefined
// behaviour and hangs.
//
//   extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
//     const std::string path = scalelab::fuzz::as_file(data, size, ".json");
//     scalelab::fuzz::expect_error_or_success([&] { (void)scalelab::topo::load_machine_file(path); });
//     return 0;
//   }
#pragma once
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include "core/error.h"

namespace scalelab::fuzz {

// Writes the input to one file per process and suffix (overwritten on every call) and returns its path.
inline std::string as_file(const std::uint8_t* data, std::size_t size, const std::string& suffix) {
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("scalelab-fuzz-" + std::to_string(::getpid()) + suffix)).string();
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  return path;
}

// Runs `parse`; a scalelab::Error is the expected answer to bad input and is swallowed.
template <typename F>
void expect_error_or_success(F&& parse) {
  try {
    parse();
  } catch (const scalelab::Error&) {
  }
}

}  // namespace scalelab::fuzz
