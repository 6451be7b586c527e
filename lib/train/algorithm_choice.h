// algo "auto" on CPU ranks: the gradient allreduce's algorithm, chosen for the step plan's
// largest bucket by whoever can price it (the scalelab command passes the calibrated cost model,
// model::Predictor::choose, the fastest algorithm it predicts), on rank 0, and exchanged so that
// every rank runs the same one (collectives/choice.h, which bench --algo auto shares). The
// averaging is in place, and with `shared_buffers` the gradients lie in node memory wherever the
// algorithm reads such buffers (CpuEngine places them): the query says both. Without a chooser, or
// when it has no answer (no calibration profile), the MPI library's own allreduce, and the words
// say why.
//
//   AlgorithmChoice c = choose_allreduce(comm, bytes, true, config.choose_algorithm);
//   // c.algorithm: "shm"; c.words: "auto: the fastest the calibrated model predicts for the largest
//   // bucket on 2 ranks"
#pragma once
#include <string>

#include "collectives/choice.h"

namespace scalelab::comm {
class Communicator;
}

namespace scalelab::train {

struct AlgorithmChoice {
  std::string algorithm;
  std::string words;  // how it was chosen, for the run's description
};

// Collective. Rank 0's choice; a name the chooser gives that is not an allreduce algorithm is a
// runtime error naming it. On one rank: library, no words (there is nothing to average).
[[nodiscard]] AlgorithmChoice choose_allreduce(comm::Communicator& comm, double bytes, bool shared_buffers,
                                              const collectives::Chooser& chooser);

}  // namespace scalelab::train
