// Fuzz target: the JSON records `scalelab plot` reads back (plot_records.h), read and turned into
// a chart (not drawn: that needs gnuplot).
#include "core/results.h"
#include "fuzz_input.h"
#include "plot_records.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = scalelab::fuzz::as_file(data, size, ".json");
  scalelab::fuzz::expect_error_or_success([&] {
    const std::vector<scalelab::cli::PlotInput> inputs{{path, scalelab::read_json_file(path)}};
    (void)scalelab::cli::chart_of_records(inputs);
  });
  return 0;
}
