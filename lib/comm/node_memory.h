// Memory the ranks of one node share: each local rank owns a region that every other rank on the
// same node reads and writes directly, with plain loads and stores. Under the mpi backend it is an
// MPI-3 shared-memory window (MPI_Comm_split_type with MPI_COMM_TYPE_SHARED, then
// MPI_Win_allocate_shared); under the local backend, memory of the one process. It is what the
// shared-memory allreduce (collectives/allreduce_shm.cpp) reduces through, instead of copying
// every byte through send/receive.
//
//   NodeMemory* mem = comm.node_memory(1 << 20);   // collective: every rank of the job calls it
//   if (mem) { unsigned char* peer = mem->region(1); ... }   // nullptr: this backend has none
//
// Regions are page aligned, zeroed (every page touched once, so later use pays no page fault) and
// valid while the communicator that made them lives. An MPI window is released by MPI_Finalize,
// not by the communicator: freeing one is collective, and a rank unwinding from an error alone
// would wait in it forever. Ordering between ranks is the caller's
// business: std::atomic flags placed in the regions, with release stores and acquire loads
// (lock-free atomics are address-free, so they work between processes as between threads).
#pragma once
#include <cstddef>
#include <span>
#include <string>
#include <vector>

namespace scalelab::comm {

// The bytes a region of at least `asked` bytes takes: whole 4 KiB pages, at least one, so that every
// region starts on a page of its own. Both backends size their regions by it.
inline constexpr std::size_t kNodePageBytes = 4096;
[[nodiscard]] inline std::size_t node_region_bytes(std::size_t asked) {
  return asked <= kNodePageBytes ? kNodePageBytes : (asked + kNodePageBytes - 1) / kNodePageBytes * kNodePageBytes;
}

class NodeMemory {
 public:
  // host_ranks: the ranks running on this host, node_ranks' size or more (more where a test cuts
  // one host into several nodes); 0: as many as node_ranks.
  NodeMemory(int local_rank, std::vector<int> node_ranks, std::vector<unsigned char*> regions, std::size_t bytes,
             int host_ranks = 0)
      : local_rank_(local_rank), node_ranks_(std::move(node_ranks)), regions_(std::move(regions)), bytes_(bytes),
        host_ranks_(host_ranks > 0 ? host_ranks : static_cast<int>(node_ranks_.size())) {}
  virtual ~NodeMemory() = default;
  NodeMemory(const NodeMemory&) = delete;
  NodeMemory& operator=(const NodeMemory&) = delete;

  // This rank's index on the node, and how many ranks the node has.
  [[nodiscard]] int local_rank() const { return local_rank_; }
  [[nodiscard]] int local_size() const { return static_cast<int>(node_ranks_.size()); }
  // The communicator ranks on this node, by local rank (ascending).
  [[nodiscard]] std::span<const int> node_ranks() const { return node_ranks_; }
  // Local rank `local`'s region: region_bytes() bytes, page aligned.
  [[nodiscard]] unsigned char* region(int local) const { return regions_[static_cast<std::size_t>(local)]; }
  [[nodiscard]] std::size_t region_bytes() const { return bytes_; }
  // Ranks of the job on this host, which share its cores (NodeBarrier's waiting policy).
  [[nodiscard]] int host_ranks() const { return host_ranks_; }

  // Called now and then by a rank that waits on a flag of local rank `local`: throws a comm
  // error when the job has already failed or that peer can no longer arrive (the local backend
  // knows; under MPI a failed peer brings the job down and the stall watchdog covers the rest).
  virtual void check_peer(int /*local*/) const {}

 private:
  int local_rank_;
  std::vector<int> node_ranks_;
  std::vector<unsigned char*> regions_;
  std::size_t bytes_;
  int host_ranks_;
};

}  // namespace scalelab::comm
