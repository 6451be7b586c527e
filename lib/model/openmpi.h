// Open MPI's own MPI_Allreduce on CPU ranks, as the cost model sees it: which algorithm the
// `tuned` component's fixed decision rules pick for a size and rank count (Open MPI 4.1,
// coll_tuned_decision_fixed.c, commutative operations), and what that algorithm costs as Open
// MPI implements it: the out-of-place copy of the input into the output first, and a temporary
// buffer malloc'ed and freed on every call (above glibc's mmap threshold that means fresh pages,
// page faults, every call: 0.44 GB/s at 64 MiB, docs/references.md "Measured on the build machines").
#pragma once
#include <string>

#include "collectives/algorithm.h"
#include "collectives/costs.h"

namespace scalelab::model {

enum class OmpiAllreduce { basic_linear = 1, nonoverlapping = 2, recursive_doubling = 3, ring = 4, segmented_ring = 5, rabenseifner = 6 };

[[nodiscard]] OmpiAllreduce openmpi_allreduce_choice(double bytes, int p);
[[nodiscard]] std::string name_of(OmpiAllreduce a);  // "rabenseifner"
using collectives::Costs;

// Time of one MPI_Allreduce of n bytes over p ranks.
[[nodiscard]] double openmpi_allreduce(double n, int p, const Costs& c, bool in_place = false);
// Time of the library's (Open MPI's) call for any collective, and how it was modelled in words
// (`detail`): allreduce as above; broadcast as a binomial tree; allgather and reduce-scatter as
// rings.
[[nodiscard]] double openmpi_collective(collectives::Collective c, double n, int p, const Costs& costs,
                                        bool in_place, std::string& detail);

}  // namespace scalelab::model
