// Checks that every rank was launched with the same arguments before they start exchanging
// buffers whose sizes must match: a mismatch becomes one clear error instead of a hang or a
// silent wrong result.
//
//   require_same(comm, count, "--minbytes: ranks disagree on the element count");
//
// throws (ErrorKind::comm), on every rank:
//   --minbytes: ranks disagree on the element count: rank 0 has 262144, rank 1 has 524288;
//   launch every rank with the same arguments
// It is collective: every rank must call it, in the same order.
#pragma once
#include <cstdint>
#include <string_view>

#include "comm/communicator.h"

namespace scalelab::comm {

void require_same(Communicator& comm, std::uint64_t value, std::string_view what);

}  // namespace scalelab::comm
