// The gradient allreduce's algorithm chosen by the cost model (see algorithm_choice.h).
#include "train/algorithm_choice.h"

#include <algorithm>
#include <cstdint>

#include <fmt/format.h>

#include "collectives/algorithm.h"
#include "comm/communicator.h"
#include "core/error.h"

namespace scalelab::train {

AlgorithmChoice choose_allreduce(comm::Communicator& comm, double bytes, const AlgorithmChooser& chooser) {
  if (comm.size() == 1) return {"library", ""};  // nothing to average, nothing to choose
  const auto names = collectives::algorithm_names(collectives::Collective::allreduce);
  std::int32_t index = -1;  // into names; -1: no choice
  if (comm.rank() == 0 && chooser) {
    const std::string pick = chooser(bytes, comm.size());
    if (!pick.empty()) {
      const auto it = std::find(names.begin(), names.end(), pick);
      if (it == names.end()) {
        throw_parameter(ErrorKind::runtime, "algo", "auto: the cost model chose '" + pick + "', which is not an allreduce algorithm");
      }
      index = static_cast<std::int32_t>(it - names.begin());
    }
  }
  comm.broadcast(&index, 1, comm::DataType::i32, 0);
  if (index < 0) {
    return {"library", "auto: the MPI library's own (no calibration profile to choose by; run 'scalelab run -np 2 -- "
                       "calibrate' once on this machine)"};
  }
  const std::string& a = names[static_cast<std::size_t>(index)];
  return {a, fmt::format("auto: the fastest the calibrated model predicts for the largest bucket on {} ranks",
                         comm.size())};
}

}  // namespace scalelab::train
