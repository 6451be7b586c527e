// The mpi backend: a Communicator over Open MPI, host memory (see comm/factory.h).
// Built through make_communicator("mpi"); declared here for code that needs the MPI_Comm
// (the nccl backend shares its ncclUniqueId over it).
#pragma once
#include <mpi.h>

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "comm/communicator.h"

namespace scalelab::comm {

class MpiCommunicator final : public Communicator {
 public:
  // MPI counts are int, so a transfer larger than this goes in several MPI calls: at most this
  // many elements per collective call, bytes per point-to-point call. 2^30 is well inside int and
  // a whole number of elements of any type.
  static constexpr std::size_t kDefaultMaxCountPerCall = std::size_t{1} << 30;

  // Initialises MPI if needed, duplicates MPI_COMM_WORLD (errors returned, not fatal) and splits
  // it by shared memory for the local rank and size. `max_count_per_call` (1 .. INT_MAX) is
  // lowered only by tests, to run the chunked paths on small buffers; every rank of a job must
  // pass the same value. `node_block` > 0, also for tests only, cuts each node into "nodes" of
  // that many consecutive local ranks, so a job on one host runs the multi-node paths.
  explicit MpiCommunicator(std::size_t max_count_per_call = kDefaultMaxCountPerCall, int node_block = 0);
  ~MpiCommunicator() override;

  [[nodiscard]] int rank() const override { return rank_; }
  [[nodiscard]] int size() const override { return size_; }
  [[nodiscard]] int local_rank() const override { return local_rank_; }
  [[nodiscard]] int local_size() const override { return local_size_; }
  [[nodiscard]] bool uniform_nodes() const override { return uniform_nodes_; }
  [[nodiscard]] std::string backend() const override { return "mpi"; }
  [[nodiscard]] MemorySpace memory_space() const override { return MemorySpace::host; }

  void send(const void* buf, std::size_t bytes, int dst, int tag) override;
  void recv(void* buf, std::size_t bytes, int src, int tag) override;
  void sendrecv(const void* sendbuf, std::size_t send_bytes, int dst, void* recvbuf,
                std::size_t recv_bytes, int src, int tag) override;

  void allreduce(const void* sendbuf, void* recvbuf, std::size_t count, DataType type, ReduceOp op) override;
  void broadcast(void* buf, std::size_t count, DataType type, int root) override;
  void allgather(const void* sendbuf, void* recvbuf, std::size_t count, DataType type) override;
  void reduce_scatter(const void* sendbuf, void* recvbuf, std::size_t count, DataType type,
                      ReduceOp op) override;
  void barrier() override;
  void host_allgather(const void* send, void* recv, std::size_t bytes_per_rank) override;
  // An MPI-3 shared-memory window over this node's ranks (released by MPI_Finalize).
  [[nodiscard]] NodeMemory* node_memory(std::size_t bytes_per_rank) override;
  [[noreturn]] void abort(const std::string& message, int exit_code) override;

  [[nodiscard]] MPI_Comm handle() const { return comm_; }

 private:
  MPI_Datatype mpi_type(DataType t) const;
  MPI_Op mpi_op(DataType t, ReduceOp op) const;

  std::size_t max_chunk_;  // elements (collectives) or bytes (point-to-point) per MPI call
  MPI_Comm comm_ = MPI_COMM_NULL;
  MPI_Comm node_comm_ = MPI_COMM_NULL;  // the ranks sharing this node's memory
  std::vector<int> node_ranks_;         // their ranks in comm_, by local rank
  std::vector<std::unique_ptr<NodeMemory>> node_memories_;  // views of the windows node_memory() made
  MPI_Datatype half_type_ = MPI_DATATYPE_NULL;  // 2 contiguous bytes
  MPI_Op half_ops_[3] = {MPI_OP_NULL, MPI_OP_NULL, MPI_OP_NULL};  // sum, min, max
  int rank_ = 0, size_ = 1, local_rank_ = 0, local_size_ = 1;
  int host_size_ = 1;  // ranks on this host (local_size_ unless node_block cuts it into nodes)
  bool uniform_nodes_ = true;
};

}  // namespace scalelab::comm
