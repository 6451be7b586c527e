// The sizes a benchmark visits and what each size means for each collective, as nccl-tests
// defines them (doc/PERFORMANCE.md there):
//   - sizes run from -b to -e, multiplied by -f when it is above 1, else stepped by -i;
//   - "size" is the bytes of the largest buffer of the call: the buffer for allreduce and
//     broadcast, the gathered output of allgather, the input of reduce-scatter; for the last two
//     the per-rank count is size / type / ranks, rounded down (as nccl-tests does);
//   - algbw = size / time and busbw = algbw * factor, with factor 2(n-1)/n for allreduce,
//     (n-1)/n for allgather and reduce-scatter, 1 for broadcast (GB = 1e9 bytes).
//
//   auto sizes = size_sweep({.min_bytes = 1 << 20, .max_bytes = 64 << 20, .step_factor = 2}, 4);
//   CaseShape s = case_shape(Collective::allgather, sizes[0], 4, /*nranks=*/3);
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "collectives/algorithm.h"

namespace scalelab::bench {

struct SweepSpec {
  std::uint64_t min_bytes = 32ull << 20;  // -b (nccl-tests' default 32M)
  std::uint64_t max_bytes = 32ull << 20;  // -e
  std::uint64_t step_factor = 1;          // -f; 1 means "step by step_bytes instead"
  std::uint64_t step_bytes = 1ull << 20;  // -i
};

// The most sizes one sweep visits (a factor of 2 from 1 B to 16 EiB is 64).
inline constexpr std::uint64_t kMaxSweepSizes = 10000;

// The sizes visited, ascending. Usage errors (one line naming the flag) for -b > -e, a step that
// never advances, more than kMaxSweepSizes sizes, or a size that is not a multiple of `type_size`.
[[nodiscard]] std::vector<std::uint64_t> size_sweep(const SweepSpec& spec, std::size_t type_size);

// When the sweep stops below -e (the next step would pass it), a comment line saying so, e.g.
// "# sizes stop at 512 MiB: the next (2 GiB) would pass -e 1 GiB"; "" when the last size is -e.
[[nodiscard]] std::string sweep_end_note(const SweepSpec& spec, const std::vector<std::uint64_t>& sizes);

// What one size means for one collective at `nranks` ranks.
struct CaseShape {
  std::uint64_t size_bytes = 0;  // the size printed and used for algbw (after rounding)
  std::uint64_t count = 0;       // elements printed in the count column: size_bytes / type size
  std::size_t call_count = 0;    // the count passed to Algorithm::run (per rank for allgather/reduce-scatter)
  std::size_t send_elems = 0;    // elements of the send buffer
  std::size_t recv_elems = 0;    // elements of the receive buffer
};

[[nodiscard]] CaseShape case_shape(collectives::Collective c, std::uint64_t size_bytes, std::size_t type_size,
                                   int nranks);

// The bus-bandwidth factor is collectives::busbw_factor (collectives/algorithm.h).

// Whether the collective reduces (takes -o) and whether it has a root (takes -r).
[[nodiscard]] bool has_reduction(collectives::Collective c);
[[nodiscard]] bool has_root(collectives::Collective c);

}  // namespace scalelab::bench
