// Checks that every rank was launched with the same arguments before they start exchanging
// buffers whose sizes must match: a mismatch becomes one clear error instead of a hang or a
// silent wrong result.
//
//   require_same(comm, count, "the element count: ranks disagree");
//
// throws (ErrorKind::comm), on every rank:
//   the element count: ranks disagree: rank 0 has 262144, rank 1 has 524288;
//   launch every rank with the same arguments
// The overload with a parameter names it as the library does (core/error.h's throw_parameter),
// so that a command-line front end prints its own flag in its place:
//   require_same(comm, batch, "batch_size", "ranks disagree")
// It is collective: every rank must call it, in the same order.
#pragma once
#include <cstdint>
#include <string_view>

#include "comm/communicator.h"

namespace scalelab::comm {

void require_same(Communicator& comm, std::uint64_t value, std::string_view what);
void require_same(Communicator& comm, std::uint64_t value, std::string_view parameter, std::string_view what);

}  // namespace scalelab::comm
