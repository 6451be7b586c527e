// Gathering host, pid and device of every rank (ranks.h).
#include "bench/ranks.h"

#include <unistd.h>

#include <algorithm>
#include <cstring>

namespace scalelab::bench {
namespace {

// Fixed-size record exchanged through Communicator::host_allgather.
struct PlaceRecord {
  char host[96];
  char device[28];
  int pid;
};

void copy_text(char* dst, std::size_t cap, const std::string& text) {
  std::memset(dst, 0, cap);
  std::memcpy(dst, text.data(), std::min(text.size(), cap - 1));
}

}  // namespace

std::vector<RankPlace> gather_rank_places(comm::Communicator& comm) {
  PlaceRecord mine{};
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  copy_text(mine.host, sizeof mine.host, host);
  const std::string device = comm.memory_space() == comm::MemorySpace::device
                                 ? "cuda:" + std::to_string(comm.local_rank())
                                 : "cpu";
  copy_text(mine.device, sizeof mine.device, device);
  mine.pid = static_cast<int>(getpid());
  std::vector<PlaceRecord> all(static_cast<std::size_t>(comm.size()));
  comm.host_allgather(&mine, all.data(), sizeof(PlaceRecord));
  std::vector<RankPlace> places;
  for (int r = 0; r < comm.size(); ++r) {
    const PlaceRecord& p = all[static_cast<std::size_t>(r)];
    places.push_back({r, p.host, p.pid, p.device});
  }
  return places;
}

}  // namespace scalelab::bench
