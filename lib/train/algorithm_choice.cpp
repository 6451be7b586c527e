// The gradient allreduce's algorithm chosen by the cost model (see algorithm_choice.h).
#include "train/algorithm_choice.h"

#include <fmt/format.h>

#include "collectives/choice.h"
#include "comm/communicator.h"

namespace scalelab::train {

AlgorithmChoice choose_allreduce(comm::Communicator& comm, double bytes, bool shared_buffers,
                                 const collectives::Chooser& chooser) {
  if (comm.size() == 1) return {"library", ""};  // nothing to average, nothing to choose
  collectives::ChoiceQuery q{collectives::Collective::allreduce, bytes};
  q.in_place = true;
  q.shared_buffers = shared_buffers;
  const std::string a = collectives::choose_algorithm(comm, q, chooser);
  if (a.empty()) {
    return {"library", "auto: the MPI library's own (no calibration profile to choose by; run 'scalelab run -np 2 -- "
                       "calibrate' once on this machine)"};
  }
  return {a, fmt::format("auto: the fastest the calibrated model predicts for the largest bucket on {} ranks",
                         comm.size())};
}

}  // namespace scalelab::train
