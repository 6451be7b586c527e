// The help text about collective algorithms, written from the algorithm table
// (collectives/algorithm.h) so that bench, predict and train list what exists and nothing else.
#pragma once
#include <optional>
#include <string>

#include "collectives/algorithm.h"

namespace scalelab::cli {

// One block per collective (or only `only`): each algorithm's name, how it moves the data, its
// segments, and the NCCL / Open MPI algorithm it teaches.
[[nodiscard]] std::string algorithms_help(std::optional<collectives::Collective> only = std::nullopt);

}  // namespace scalelab::cli
