// Fuzz target: sizes and counts as typed on the command line (core/size_parse.h), and the
// formatting of every size parsed.
#include <string_view>

#include "core/size_parse.h"
#include "fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  scalelab::fuzz::expect_error_or_success([&] { (void)scalelab::format_size(scalelab::parse_size(text, "--size")); });
  scalelab::fuzz::expect_error_or_success([&] { (void)scalelab::parse_int(text, "--count"); });
  return 0;
}
