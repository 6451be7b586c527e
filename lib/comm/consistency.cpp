// require_same (consistency.h): every rank's value through the host control-plane exchange,
// compared on every rank, so all ranks throw the same message together.
#include "comm/consistency.h"

#include <string>
#include <vector>

#include "core/error.h"

namespace scalelab::comm {

namespace {

// Empty when every rank holds rank 0's value; else ": rank 0 has A, rank 1 has B ...; launch ...".
std::string disagreement(Communicator& comm, std::uint64_t value) {
  std::vector<std::uint64_t> all(static_cast<std::size_t>(comm.size()));
  comm.host_allgather(&value, all.data(), sizeof(value));
  // Name rank 0's value and the first few ranks that differ from it.
  std::string detail;
  int shown = 0, differing = 0;
  for (std::size_t r = 1; r < all.size(); ++r) {
    if (all[r] == all[0]) continue;
    ++differing;
    if (shown < 4) {
      detail += ", rank " + std::to_string(r) + " has " + std::to_string(all[r]);
      ++shown;
    }
  }
  if (differing == 0) return "";
  if (differing > shown) detail += " (and " + std::to_string(differing - shown) + " more ranks differ)";
  return ": rank 0 has " + std::to_string(all[0]) + detail + "; launch every rank with the same arguments";
}

}  // namespace

void require_same(Communicator& comm, std::uint64_t value, std::string_view what) {
  const std::string d = disagreement(comm, value);
  if (!d.empty()) throw_comm(std::string(what) + d);
}

void require_same(Communicator& comm, std::uint64_t value, std::string_view parameter, std::string_view what) {
  const std::string d = disagreement(comm, value);
  if (!d.empty()) throw_parameter(ErrorKind::comm, std::string(parameter), ": " + std::string(what) + d);
}

}  // namespace scalelab::comm
