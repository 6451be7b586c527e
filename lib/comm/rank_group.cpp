// RankGroup (comm/rank_group.h): point-to-point among some of a parent's ranks.
#include "comm/rank_group.h"

#include <algorithm>
#include <cstdlib>

#include "core/error.h"

namespace scalelab::comm {

RankGroup::RankGroup(Communicator& parent, std::vector<int> members) : parent_(parent), members_(std::move(members)) {
  for (std::size_t i = 0; i < members_.size(); ++i) {
    const int m = members_[i];
    if (m < 0 || m >= parent_.size() || std::count(members_.begin(), members_.end(), m) != 1) {
      throw_runtime("RankGroup: member " + std::to_string(m) + " is not a distinct rank of a communicator of " +
                    std::to_string(parent_.size()));
    }
    if (m == parent_.rank()) rank_ = static_cast<int>(i);
  }
  if (rank_ < 0) {
    throw_runtime("RankGroup: rank " + std::to_string(parent_.rank()) + " is not among the group's members");
  }
}

int RankGroup::parent_rank(int r) const {
  if (r < 0 || r >= size()) {
    throw_comm("rank group: rank " + std::to_string(r) + " does not exist (size " + std::to_string(size()) + ")");
  }
  return members_[static_cast<std::size_t>(r)];
}

void RankGroup::send(const void* buf, std::size_t bytes, int dst, int tag) {
  parent_.send(buf, bytes, parent_rank(dst), tag);
}

void RankGroup::recv(void* buf, std::size_t bytes, int src, int tag) {
  parent_.recv(buf, bytes, parent_rank(src), tag);
}

void RankGroup::sendrecv(const void* sendbuf, std::size_t send_bytes, int dst, void* recvbuf, std::size_t recv_bytes,
                         int src, int tag) {
  parent_.sendrecv(sendbuf, send_bytes, parent_rank(dst), recvbuf, recv_bytes, parent_rank(src), tag);
}

void RankGroup::abort(const std::string& message, int exit_code) {
  parent_.abort(message, exit_code);
  std::abort();  // the parent's abort does not return; this keeps [[noreturn]] honest
}

void RankGroup::unsupported(const char* what) {
  throw_runtime(std::string("rank group: ") + what +
                " is not offered on a group of ranks (point-to-point only); run it on the whole communicator");
}

}  // namespace scalelab::comm
