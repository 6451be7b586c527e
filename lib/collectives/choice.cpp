// Rank 0's choice of algorithm, exchanged (choice.h).
#include "collectives/choice.h"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "comm/communicator.h"
#include "core/error.h"

namespace scalelab::collectives {

bool can_run(const AlgorithmDescriptor& d, const ChoiceQuery& q) { return q.uniform_nodes || !d.uniform_nodes; }

std::string choose_algorithm(comm::Communicator& comm, ChoiceQuery q, const Chooser& chooser) {
  const Collective c = q.collective;
  const auto names = algorithm_names(c);
  std::int32_t index = -1;  // into names; -1: no choice
  if (comm.rank() == 0 && chooser) {
    q.ranks = comm.size();
    q.uniform_nodes = comm.uniform_nodes();
    const std::string pick = chooser(q);
    if (!pick.empty()) {
      const auto it = std::find(names.begin(), names.end(), pick);
      if (it == names.end()) {
        throw_parameter(ErrorKind::runtime, "algo",
                        "auto: the cost model chose '" + pick + "', which is not a " + std::string(name_of(c)) +
                            " algorithm");
      }
      if (!can_run(find_algorithm(c, pick), q)) {
        throw_parameter(ErrorKind::runtime, "algo",
                        "auto: the cost model chose '" + pick +
                            "', which needs the same number of ranks on every node, and this job's nodes differ");
      }
      index = static_cast<std::int32_t>(it - names.begin());
    }
  }
  std::vector<std::int32_t> all(static_cast<std::size_t>(comm.size()));
  comm.host_allgather(&index, all.data(), sizeof index);
  return all[0] < 0 ? std::string() : names[static_cast<std::size_t>(all[0])];
}

}  // namespace scalelab::collectives
