// "auto": which algorithm of a collective to run for a size, as whoever can price it says (a
// Chooser: the scalelab command passes the calibrated cost model, model::Predictor::choose, the
// fastest algorithm it predicts that can run there), asked on rank 0 and exchanged so that every
// rank runs the same one. `train --algo auto` (for the largest gradient bucket, in place, on
// gradients in node memory) and `bench --algo auto` (per size) both choose here.
//
//   ChoiceQuery q{Collective::allreduce, 4.8e6};
//   q.in_place = true;
//   const std::string a = choose_algorithm(comm, q, chooser);
//   // "shm"; "" when the chooser has no answer (no calibration profile) or there is no chooser
#pragma once
#include <functional>
#include <string>

#include "collectives/algorithm.h"

namespace scalelab::comm {
class Communicator;
}

namespace scalelab::collectives {

// What the call will be, for pricing it.
struct ChoiceQuery {
  Collective collective = Collective::allreduce;
  double bytes = 0;
  int ranks = 0;                // set by choose_algorithm: the communicator's size
  bool in_place = false;        // the output is the input
  bool shared_buffers = false;  // every rank's buffers are in node memory (Communicator::shared_buffer)
  bool uniform_nodes = true;    // set by choose_algorithm: Communicator::uniform_nodes (else algorithms
                                // with AlgorithmDescriptor::uniform_nodes cannot run)
};

// The algorithm (a name of algorithm_names(q.collective)) for the query, or "" when it cannot tell.
using Chooser = std::function<std::string(const ChoiceQuery& q)>;

// Whether `d` can run where the query says (AlgorithmDescriptor::uniform_nodes).
[[nodiscard]] bool can_run(const AlgorithmDescriptor& d, const ChoiceQuery& q);

// Collective (exchanges in host memory whatever the backend keeps its buffers in). Rank 0's answer;
// a name it gives that is not an algorithm of the collective, or one that cannot run here, is a
// runtime error naming it, on rank 0, before the exchange (the job comes down with it).
[[nodiscard]] std::string choose_algorithm(comm::Communicator& comm, ChoiceQuery q, const Chooser& chooser);

}  // namespace scalelab::collectives
