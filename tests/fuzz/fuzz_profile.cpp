// Fuzz target: calibration profiles (model/profile.h), read and then asked for the costs the
// cost model takes from them.
#include "fuzz_input.h"
#include "model/profile.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = scalelab::fuzz::as_file(data, size, ".json");
  scalelab::fuzz::expect_error_or_success([&] {
    const scalelab::model::Profile p = scalelab::model::load_profile(path);
    const scalelab::model::CpuCosts costs(p, 4.0 * 1024 * 1024);
    for (const double bytes : {1.0, 4096.0, 1048576.0}) {
      (void)costs.message(bytes);
      (void)costs.reduce(bytes);
      (void)costs.copy(bytes);
      (void)costs.fresh(bytes, bytes);
      (void)costs.exchange_reduce(bytes);
      (void)costs.staged(bytes);
      (void)costs.peer_copy(bytes);
    }
  });
  return 0;
}
