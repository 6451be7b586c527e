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
//
// require_same_fields checks many named values at once (a whole configuration) and names each
// that differs, with the ranks' values as text:
//   require_same_fields(comm, {{"lr", "0.05"}, {"seed", "42"}});
// throws (ErrorKind::usage unless told otherwise), on every rank:
//   lr differs across ranks: rank 0 has 0.05, rank 1 has 0.1; launch every rank with the same arguments
// Each rank sends one 64-bit fingerprint per field (FNV-1a of the field's name and text); only
// when fingerprints differ are the texts of the differing fields exchanged, to name them.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "comm/communicator.h"
#include "core/error.h"

namespace scalelab::comm {

// One value every rank must hold alike: the library's name for it and its canonical text.
struct NamedValue {
  std::string parameter;
  std::string value;
};

// FNV-1a, 64 bits, of `text`: a fingerprint for comparing texts across ranks.
[[nodiscard]] std::uint64_t fingerprint(std::string_view text);

// Throws an Error of `kind` naming every field whose value differs from rank 0's on some rank.
// Collective; every rank passes the same parameters in the same order (the values may differ).
void require_same_fields(Communicator& comm, const std::vector<NamedValue>& fields,
                         ErrorKind kind = ErrorKind::usage);

void require_same(Communicator& comm, std::uint64_t value, std::string_view what);
void require_same(Communicator& comm, std::uint64_t value, std::string_view parameter, std::string_view what);

}  // namespace scalelab::comm
