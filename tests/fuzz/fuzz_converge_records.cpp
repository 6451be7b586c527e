// Fuzz target: the JSON records `scalelab converge --from` reads back (converge_report.h): read,
// checked, and drawn as the table (to a discarded stream). The charts need gnuplot and are left out.
#include <sstream>

#include "converge_report.h"
#include "fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = scalelab::fuzz::as_file(data, size, ".json");
  scalelab::fuzz::expect_error_or_success([&] {
    const scalelab::cli::ConvergeRecords r = scalelab::cli::read_converge_records({path}, 0.85);
    std::ostringstream table;
    scalelab::cli::print_converge_table(table, r.configurations, r.target_accuracy);
  });
  return 0;
}
