// "auto": which algorithm of a collective to run for a size, as whoever can price it says (a
// Chooser: the scalelab command passes the calibrated cost model, model::Predictor, whose "auto"
// is the fastest algorithm it predicts), asked on rank 0 and exchanged so that every rank runs
// the same one. `train --algo auto` (for the largest gradient bucket) and `bench --algo auto`
// (per size) both choose here.
//
//   const std::string a = choose_algorithm(comm, Collective::allreduce, 4.8e6, chooser);
//   // "shm"; "" when the chooser has no answer (no calibration profile) or there is no chooser
#pragma once
#include <functional>
#include <string>

#include "collectives/algorithm.h"

namespace scalelab::collectives {

// The algorithm (a name of algorithm_names(c)) for `bytes` on `ranks` ranks, or "" when it cannot tell.
using Chooser = std::function<std::string(Collective c, double bytes, int ranks)>;

// Collective (exchanges in host memory whatever the backend keeps its buffers in). Rank 0's answer;
// a name it gives that is not an algorithm of `c` is a runtime error naming it, on rank 0, before
// the exchange (the job comes down with it).
[[nodiscard]] std::string choose_algorithm(comm::Communicator& comm, Collective c, double bytes, const Chooser& chooser);

}  // namespace scalelab::collectives
