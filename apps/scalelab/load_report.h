// Load awareness for the measuring commands (train, bench, calibrate, converge): every rank's
// CPU share over the measurement (core/cpu_share.h), gathered through the communicator; the
// "load" object of the result file (docs/results-schema.md) and one warning line from rank 0
// when a rank did not get its core.
//
//   LoadReport load;                                  // every rank starts sampling
//   ... measure ...
//   doc["load"] = load.finish(*communicator, threads);  // collective; prints the warning once
#pragma once
#include <nlohmann/json.hpp>

#include "core/cpu_share.h"

namespace scalelab::comm {
class Communicator;
}  // namespace scalelab::comm

namespace scalelab::cli {

class LoadReport {
 public:
  // Collective. Stops this rank's meter, gathers every rank's figures and returns the "load"
  // object (the same on every rank); rank 0 prints "warning: <why>" on stderr when contended
  // and `warn` (a command that refuses the result says why in its error line instead).
  nlohmann::json finish(comm::Communicator& c, int threads = 1, bool warn = true) const;

 private:
  CpuShareMeter meter_;
};

// True when a result's "load" object says its timings were taken on a contended machine.
[[nodiscard]] bool contended(const nlohmann::json& load);

}  // namespace scalelab::cli
