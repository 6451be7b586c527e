// Fuzz target: machine files (topo/machine_file.h, docs/machine-format.md), read, checked and
// written back as JSON.
#include <nlohmann/json.hpp>

#include "fuzz_input.h"
#include "topo/machine_file.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = scalelab::fuzz::as_file(data, size, ".json");
  scalelab::fuzz::expect_error_or_success([&] {
    const scalelab::topo::Machine m = scalelab::topo::load_machine_file(path);
    (void)scalelab::topo::to_json(m).dump();
  });
  return 0;
}
