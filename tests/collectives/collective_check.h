// Checks one collective algorithm against a plain reference computed locally from the known
// inputs. Shared by the local-thread unit tests and the MPI tests of every algorithm.
//
// Inputs are small integers, value(rank, i) in -5..5, so every sum over up to a few dozen ranks is
// exact in float16 too and the expected results can be compared for exact equality. The
// reference adds in double and applies avg with the element type's own arithmetic (float16:
// float32 division rounded to half; int32: truncation), as reduce.h specifies.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "collectives/algorithm.h"
#include "comm/communicator.h"

namespace scalelab::test {

struct CheckCase {
  std::size_t count;
  comm::DataType type;
  comm::ReduceOp op;
  bool in_place;
  int root;
};

// Runs `algo` once for `c` on this rank and returns "" when every element of the result is
// exact (and, out of place, the input is untouched), else a one-line description of the first
// difference. Collective: every rank must call it with the same case.
// With `memory` (at least check_memory_bytes(comm.size()) bytes, e.g. a shared buffer of
// Communicator::shared_buffer), the input and output buffers are placed in it instead of in
// vectors of their own.
std::string check_collective(comm::Communicator& comm, collectives::Algorithm& algo, const CheckCase& c,
                             unsigned char* memory = nullptr);
[[nodiscard]] std::size_t check_memory_bytes(int nranks);

// Every case of the test matrix for `algo` at this rank count: types x ops (ops only where the
// collective reduces) x counts {0, 1, p-1, p, p+1, 1000, 65537} x in-place/out-of-place x roots
// {0, p-1} (broadcast only). Returns the failures found on this rank.
std::vector<std::string> check_all_cases(comm::Communicator& comm, collectives::Algorithm& algo,
                                         unsigned char* memory = nullptr);

// The small integer every test input holds at element i of `rank`'s buffer.
[[nodiscard]] inline int test_value(int rank, std::size_t i) {
  return static_cast<int>((static_cast<std::size_t>(rank) * 7 + i * 3) % 11) - 5;
}

}  // namespace scalelab::test
