// Fuzz target: workload files (sim/workload.h, docs/workload-format.md), read and totalled.
#include "fuzz_input.h"
#include "sim/workload.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = scalelab::fuzz::as_file(data, size, ".json");
  scalelab::fuzz::expect_error_or_success([&] {
    const scalelab::sim::Workload w = scalelab::sim::resolve_workload(path);
    (void)w.parameters();
    (void)w.forward_flops();
  });
  return 0;
}
