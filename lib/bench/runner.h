// The benchmark harness: for each data type, operator and size, allocates the buffers once,
// builds inputs with a known result (pattern.h), runs warm-up then timed iterations and checks
// the output of the last one.
//
// Timing: before every timed call all ranks meet in a barrier; each rank times its own call
// (steady clock); an iteration's time is the slowest rank's; a size's time is the median over
// iterations. With --compare the algorithm and the library alternate iteration by iteration
// (which goes first alternates too), so both see the same machine load. In-place runs restore
// their input before every iteration, outside the timed region. Before the last iteration the
// output buffers are poisoned (outside the timed region), so an algorithm that leaves an
// element unwritten is counted wrong.
//
//   auto result = run_benchmark(*comm, options, [&](const Row& row) { printer.row(row); });
//
// Every rank returns the same result (times and wrong counts are exchanged at the end of each
// size). Every rank must call it with the same options: it checks that first and throws a usage
// error naming the ranks that disagree.
#pragma once
#include <functional>
#include <optional>

#include "bench/options.h"
#include "bench/shared_arena.h"
#include "comm/communicator.h"

namespace scalelab::bench {

using RowCallback = std::function<void(const Row&)>;

// With options.shared_buffers the buffers come from a shared buffer (shared_arena.h), made after
// the sizes are checked against the memory: in *arena_slot when given and empty (a run of several
// algorithms passes one slot, so the buffer is made once), else for this call.
[[nodiscard]] BenchResult run_benchmark(comm::Communicator& comm, const BenchOptions& options,
                                        const RowCallback& on_row = {},
                                        std::optional<SharedArena>* arena_slot = nullptr);

// Throws a usage error when ranks were launched with different options (sizes, type, op,
// algorithm, iterations ...), naming the option and the ranks, or when the (agreed) options are
// wrong on every rank alike: a root that is not a rank, iteration counts out of range, sizes
// that do not suit a type or do not fit in memory; collective.
void require_same_options(comm::Communicator& comm, const BenchOptions& options);

}  // namespace scalelab::bench
