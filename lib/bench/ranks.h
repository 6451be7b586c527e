// Where each rank of a benchmark runs (host, process id, device), gathered onto every rank for
// the "# Using devices" lines of the table and the JSON record.
#pragma once
#include <string>
#include <vector>

#include "comm/communicator.h"

namespace scalelab::bench {

struct RankPlace {
  int rank = 0;
  std::string host;
  int pid = 0;
  std::string device;  // "cpu" for host-memory backends, "cuda:<local rank>" for nccl
};

// Collective: every rank gets every rank's place, indexed by rank.
[[nodiscard]] std::vector<RankPlace> gather_rank_places(comm::Communicator& comm);

}  // namespace scalelab::bench
