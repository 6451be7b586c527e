// Benchmark inputs whose exact result is known, and the exact count of wrong elements.
//
// Rank r of n holds, at index i, the small integer
//     f(r, i) = a(i) + 2 * ((r + i) mod n) - (n - 1),     a(i) = 1 + (i mod 13)
// The second term runs over every residue once across ranks and sums to zero, so for every i:
//     sum = n * a(i),  avg = a(i),  min = a(i) - (n - 1),  max = a(i) + (n - 1),
// all exact in every type (float16 too while n * (13 + n) < 2048, i.e. up to 38 ranks), and
// different on every rank for n >= 2, so a block sent to the wrong place or never written is
// caught. Expected outputs per collective (c = the per-call count of sweep.h's CaseShape):
//     allreduce       out[i]         = R(i)            (R = the reduction over ranks)
//     broadcast       out[i]         = f(root, i)
//     allgather       out[q * c + i] = f(q, i)
//     reduce-scatter  out[i] on rank q = R(q * c + i)
// An element is wrong when it differs from the expected value by more than a tolerance that
// only absorbs rounding of float types (1e-6 relative for float, 1e-12 double, 1e-3 half, 0 for
// int32); every real error here is at least 1/n.
#pragma once
#include <cstddef>
#include <cstdint>

#include "collectives/algorithm.h"
#include "comm/types.h"

namespace scalelab::bench {

// f(r, i) and the reduction over all ranks, as exact values.
[[nodiscard]] double input_value(int rank, int nranks, std::size_t index);
[[nodiscard]] double reduced_value(comm::ReduceOp op, int nranks, std::size_t index);

// Fills this rank's send buffer (host memory, send_elems elements of `type`) for collective c.
void fill_input(collectives::Collective c, comm::DataType type, int rank, int nranks, std::size_t call_count,
                void* send);
// Fills `elems` elements with a value that no correct result holds (NaN; INT32_MIN for int32).
void poison(comm::DataType type, std::size_t elems, void* buf);
// The number of wrong elements in this rank's receive buffer (host memory, recv_elems elements).
[[nodiscard]] std::uint64_t count_wrong(collectives::Collective c, comm::DataType type, comm::ReduceOp op,
                                        int rank, int nranks, int root, std::size_t call_count,
                                        const void* recv);

}  // namespace scalelab::bench
