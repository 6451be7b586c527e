// algo "auto" on CPU ranks: the gradient allreduce's algorithm, chosen for the step plan's
// largest bucket by whoever can price it (the scalelab command passes the calibrated cost model,
// model::Predictor, whose "auto" is the fastest algorithm it predicts), on rank 0, and broadcast so
// that every rank runs the same one (collectives/choice.h, which bench --algo auto shares). Without
// a chooser, or when it has no answer (no calibration profile), the MPI library's own allreduce,
// and the words say why.
//
//   AlgorithmChoice c = choose_allreduce(comm, bytes, config.choose_algorithm);
//   // c.algorithm: "shm"; c.words: "auto: the fastest the calibrated model predicts for the largest
//   // bucket on 2 ranks"
#pragma once
#include <functional>
#include <string>

namespace scalelab::comm {
class Communicator;
}

namespace scalelab::train {

// The algorithm (a name of collectives::algorithm_names(allreduce)) for buckets of `bytes` on
// `ranks` ranks, or "" when it cannot tell.
using AlgorithmChooser = std::function<std::string(double bytes, int ranks)>;

struct AlgorithmChoice {
  std::string algorithm;
  std::string words;  // how it was chosen, for the run's description
};

// Collective. Rank 0's choice; a name the chooser gives that is not an allreduce algorithm is a
// runtime error naming it. On one rank: library, no words (there is nothing to average).
[[nodiscard]] AlgorithmChoice choose_allreduce(comm::Communicator& comm, double bytes, const AlgorithmChooser& chooser);

}  // namespace scalelab::train
