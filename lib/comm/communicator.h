// The Communicator: one rank's view of a group of ranks, and the only way scalelab moves bytes
// between them. Backends (comm/backends/): mpi (Open MPI, host memory), nccl (one GPU per rank,
// device memory), local (threads in one process, for tests and demonstrations).
//
// Point-to-point calls are what the collective algorithms of collectives/ are built from; the
// collective calls here are the *library's own* implementation (MPI_Allreduce, ncclAllReduce),
// which the benchmark names `--algo library`.
//
// Buffers live in memory_space(): host memory for mpi and local, device memory for nccl.
// In-place is requested by passing the same pointer as send and recv (allreduce, broadcast), or,
// as in NCCL and nccl-tests, send == recv + rank() * count for allgather and
// recv == send + rank() * count for reduce-scatter. Counts are elements.
// Every call blocks until this rank's part is complete. A peer that fails makes the call throw
// (ErrorKind::comm) or brings the job down; it never hangs silently.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "comm/node_memory.h"
#include "comm/types.h"

namespace scalelab::comm {

enum class MemorySpace { host, device };

class Communicator {
 public:
  virtual ~Communicator() = default;
  Communicator() = default;
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

  [[nodiscard]] virtual int rank() const = 0;
  [[nodiscard]] virtual int size() const = 0;
  [[nodiscard]] virtual int local_rank() const = 0;
  [[nodiscard]] virtual int local_size() const = 0;
  // Every node has the same number of ranks (the same local_size on every rank): what the
  // hierarchical node-memory algorithms need. Known at construction, so asking is free.
  [[nodiscard]] virtual bool uniform_nodes() const { return true; }
  [[nodiscard]] virtual std::string backend() const = 0;  // "mpi", "nccl", "local"
  [[nodiscard]] virtual MemorySpace memory_space() const = 0;

  // Point-to-point, in bytes. sendrecv does both at once (deadlock-free for ring exchanges).
  virtual void send(const void* buf, std::size_t bytes, int dst, int tag) = 0;
  virtual void recv(void* buf, std::size_t bytes, int src, int tag) = 0;
  virtual void sendrecv(const void* sendbuf, std::size_t send_bytes, int dst, void* recvbuf,
                        std::size_t recv_bytes, int src, int tag) = 0;

  // The library's collectives, in elements.
  virtual void allreduce(const void* sendbuf, void* recvbuf, std::size_t count, DataType type, ReduceOp op) = 0;
  virtual void broadcast(void* buf, std::size_t count, DataType type, int root) = 0;
  // recvbuf holds size() * count elements, rank r's contribution at offset r * count.
  virtual void allgather(const void* sendbuf, void* recvbuf, std::size_t count, DataType type) = 0;
  // sendbuf holds size() * count elements; rank r receives the reduction of block r.
  virtual void reduce_scatter(const void* sendbuf, void* recvbuf, std::size_t count, DataType type,
                              ReduceOp op) = 0;
  virtual void barrier() = 0;

  // Control-plane exchange in host memory whatever memory_space() is: recv receives size() *
  // bytes_per_rank bytes, rank r's at offset r * bytes_per_rank. For small values (argument checks,
  // timings), not for payloads. The default goes over send/recv and needs host memory; the nccl
  // backend overrides it.
  virtual void host_allgather(const void* send, void* recv, std::size_t bytes_per_rank);
  // Copies `bytes` within this rank's memory space (memmove on the host, cudaMemcpy for nccl):
  // how algorithms place a rank's own block without knowing where buffers live.
  virtual void local_copy(void* dst, const void* src, std::size_t bytes);
  // Memory shared by the ranks of this node (comm/node_memory.h): a region of `bytes_per_rank`
  // per local rank, owned by this communicator and valid while it lives. Collective: every rank
  // of the communicator calls it, with the same size. nullptr where the backend has none (nccl).
  [[nodiscard]] virtual NodeMemory* node_memory(std::size_t /*bytes_per_rank*/) { return nullptr; }
  // A buffer for collectives in node memory (a registered buffer): `bytes` of this rank's own region
  // of a fresh node_memory(), zeroed. The algorithms that work through node memory (shm) read such
  // buffers on the peers directly instead of first copying the caller's data into their staging
  // memory, as NCCL does with buffers from ncclMemAlloc. Collective, like node_memory(); valid
  // while the communicator lives. nullptr where the backend has no node memory.
  [[nodiscard]] unsigned char* shared_buffer(std::size_t bytes);
  // Where [p, p + bytes) lies in this rank's shared buffers: the buffer's index (in the order they
  // were made, so the same buffer on every rank) and the byte offset in it; buffer -1 where the
  // range is not inside one.
  struct SharedPlace {
    int buffer = -1;
    std::size_t offset = 0;
  };
  [[nodiscard]] SharedPlace shared_place(const void* p, std::size_t bytes) const;
  // The node memory that shared buffer `index` is a region of (index as shared_place gives it).
  [[nodiscard]] const NodeMemory& shared_buffer_memory(int index) const;
  // Gives back a buffer shared_buffer() made, for a later shared_buffer() call of at most its size to
  // reuse: node memory is freed only with the communicator, and a trainer built again and again on
  // one communicator (`converge`) would otherwise take a new one each time. Collective like
  // shared_buffer(): every rank gives back the same buffers in the same order, once no call uses them.
  void release_shared_buffer(const unsigned char* buffer);
  // Whether shared_buffer() has made any buffer; the same on every rank, since making one is collective.
  [[nodiscard]] bool has_shared_buffers() const { return !shared_buffers_.empty(); }
  // Every rank's `value`, indexed by rank (through host_allgather). Collective.
  [[nodiscard]] std::vector<double> gather_values(double value);
  // The largest `value` over all ranks, e.g. a step's time (the slowest rank sets the pace).
  [[nodiscard]] double max_over_ranks(double value);

  // Brings the whole job down with `message` (printed once, on this rank) and `exit_code`.
  [[noreturn]] virtual void abort(const std::string& message, int exit_code) = 0;

 private:
  std::vector<NodeMemory*> shared_buffers_;  // shared_buffer()'s memories, owned by the backend
  std::vector<bool> shared_free_;            // given back, to be reused
};

}  // namespace scalelab::comm
