// A Communicator over some ranks of another, for point-to-point algorithms that run among a
// subset: the hierarchical shared-memory allreduce runs the ring among the ranks that hold the
// same local rank on each node. Rank i of the group is parent rank members[i]; sends and receives
// go through the parent with the ranks translated. Only the point-to-point calls are offered
// (the library's collectives would need a communicator of MPI's own): the others throw.
//
//   RankGroup across(world, {1, 3, 5});   // world rank 3 sees rank 1 of 3
//   ring->run(across, buf, buf, n, DataType::f32, ReduceOp::sum, 0);
#pragma once
#include <string>
#include <vector>

#include "comm/communicator.h"

namespace scalelab::comm {

class RankGroup final : public Communicator {
 public:
  // `members`: distinct parent ranks, this rank among them.
  RankGroup(Communicator& parent, std::vector<int> members);

  [[nodiscard]] int rank() const override { return rank_; }
  [[nodiscard]] int size() const override { return static_cast<int>(members_.size()); }
  [[nodiscard]] int local_rank() const override { return 0; }
  [[nodiscard]] int local_size() const override { return 1; }
  [[nodiscard]] std::string backend() const override { return parent_.backend(); }
  [[nodiscard]] MemorySpace memory_space() const override { return parent_.memory_space(); }

  void send(const void* buf, std::size_t bytes, int dst, int tag) override;
  void recv(void* buf, std::size_t bytes, int src, int tag) override;
  void sendrecv(const void* sendbuf, std::size_t send_bytes, int dst, void* recvbuf, std::size_t recv_bytes,
                int src, int tag) override;

  void allreduce(const void*, void*, std::size_t, DataType, ReduceOp) override { unsupported("allreduce"); }
  void broadcast(void*, std::size_t, DataType, int) override { unsupported("broadcast"); }
  void allgather(const void*, void*, std::size_t, DataType) override { unsupported("allgather"); }
  void reduce_scatter(const void*, void*, std::size_t, DataType, ReduceOp) override { unsupported("reduce_scatter"); }
  void barrier() override { unsupported("barrier"); }
  void local_copy(void* dst, const void* src, std::size_t bytes) override { parent_.local_copy(dst, src, bytes); }
  [[noreturn]] void abort(const std::string& message, int exit_code) override;

 private:
  [[nodiscard]] int parent_rank(int r) const;
  [[noreturn]] static void unsupported(const char* what);

  Communicator& parent_;
  std::vector<int> members_;
  int rank_ = -1;
};

}  // namespace scalelab::comm
