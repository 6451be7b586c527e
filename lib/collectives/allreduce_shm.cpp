// Shared-memory allreduce: the ranks of a node reduce through memory they all map
// (comm/node_memory.h, an MPI-3 shared window under mpi) instead of copying every byte through
// send and receive. The buffer goes in chunks of at most kChunkBytes, each staged in the rank's
// own staging ring in the shared memory:
//
//   copy in    each rank copies its chunk of the input into its ring, then raises its flag
//   one node of 2 ranks (one phase):
//              every rank reduces the whole chunk into its output from its own input and the
//              peer's ring, in rank order, so both compute the same bits; one flag wait per chunk.
//              Its own staged copy is left for the peer: reading it back while the peer reads it
//              too made a chunk take 2.2 times as long on a 2-core Zen 4 VM (docs/performance.md)
//   more ranks (two phases):
//              rank l reduces slice l of the chunk from every ring into its own ring, raises its
//              flag; once every flag is up, each rank copies all slices into its output: each byte
//              is reduced once on the node, 2 flag waits per chunk
//   several nodes (hierarchical): the two phases, with slice l allreduced between the nodes in
//              between by the ring among the ranks holding local rank l on each node (every node
//              needs the same number of ranks)
//
// Shared buffers (Communicator::shared_buffer, in node memory like the rings) need no staging: when
// every rank's input and output lie in such buffers, the ranks first publish where (a flag wait),
// then per chunk rank l reduces slice l straight from every rank's input into its own output, and
// after one flag wait each copies the other slices from the peers' outputs; a last flag wait keeps
// the caller from reusing its buffers while a peer still reads them. No byte is copied in, so each
// byte of a peer's data crosses between cores once (the slice it reduces and the slices it copies
// out) and per chunk there is one flag wait: the traffic of the memory-traffic limit
// (docs/cost-model.md), which the staged form exceeds by a copy in and a whole chunk reduced.
//
// The ranks of a node step together through a comm::NodeBarrier (flags in the regions). Chunks
// take consecutive places in a ring of kRingBytes, not two alternating slots: the bytes a peer
// read are overwritten only several chunks later, by which time they have left the peer's cache.
// Overwriting lines another core still holds costs an invalidation per line, and with both cores
// doing it at once a 64 KiB copy-in took 2.4 us instead of 0.6 (docs/cost-model.md). Bytes of
// chunk c are written again at chunk c + 2 at the earliest, after every peer's flag for chunk
// c + 1 shows it has finished reading chunk c, so no step needs a second wait. Flags and rings
// persist across calls, so a call allocates nothing.
#include "collectives/algorithm_base.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "comm/node_barrier.h"
#include "comm/rank_group.h"
#include "core/error.h"

namespace scalelab::collectives {
namespace {

// A chunk is at most 256 KiB: a rank's chunk and the peers' chunk it reads stay within a core's
// L2 (1 MiB on current server cores), and a 64 MiB call is 256 chunks, whose 256-512 flag waits
// cost far less than its memory traffic. The ring holds eight chunks (2 MiB per rank): of the
// rings tried here (1-8 chunks of 32-256 KiB), the fastest from 64 KiB to 64 MiB.
constexpr std::size_t kChunkBytes = 256 * 1024;
constexpr std::size_t kRingBytes = 8 * kChunkBytes;
constexpr std::size_t kFlagArea = 4096;  // the NodeBarrier's flag, padded so the ring starts on a page
// Where a rank publishes the places of its shared buffers (direct path), a line after the flag.
constexpr std::size_t kPlaceOffset = 64;
struct Places {
  std::int64_t send_buffer, recv_buffer;  // Communicator::SharedPlace; -1: not in a shared buffer
  std::uint64_t send_offset, recv_offset;
};
constexpr std::size_t kRegionBytes = kFlagArea + kRingBytes;
// Chunks start on cache lines, so that no line holds bytes of two chunks.
constexpr std::size_t kLine = 64;

class ShmAllreduce final : public PointToPointAlgorithm {
 public:
  ShmAllreduce() : PointToPointAlgorithm("shm", Collective::allreduce) {}
  [[nodiscard]] std::size_t scratch_bytes() const override {
    return PointToPointAlgorithm::scratch_bytes() + (ring_ ? ring_->scratch_bytes() : 0);
  }
  [[nodiscard]] std::uint64_t staged_bytes() const override { return staged_bytes_; }

 private:
  void exchange(comm::Communicator& comm, const void* send, void* recv, std::size_t count, comm::DataType type,
                comm::ReduceOp op, int /*root*/) override {
    attach(comm);
    const std::size_t es = comm::size_of(type);
    const std::size_t per_chunk = kChunkBytes / es;
    if (comm.has_shared_buffers() && peers_shared(comm, send, recv, count * es)) {
      for (std::size_t off = 0; off < count; off += per_chunk) {
        direct_chunk(off, std::min(per_chunk, count - off), type, op, comm.size());
      }
      barrier_->arrive_and_wait();  // every peer has copied its last slices out of this rank's output
      return;
    }
    for (std::size_t off = 0; off < count; off += per_chunk) {
      chunk(at(send, off, es), at(recv, off, es), std::min(per_chunk, count - off), type, op, comm.size());
    }
  }

  // Publishes where this rank's input and output lie in the shared buffers and reads every peer's
  // (one flag wait); true when all of them lie in shared buffers, with peer_send_/peer_recv_ set
  // (element 0 of every local rank's buffers). The same answer on every rank of the node. A rank
  // rewrites its places only in its next call, after the next flag wait, which no rank reaches
  // before reading them (every call has a chunk: run() returns early at count 0).
  bool peers_shared(const comm::Communicator& comm, const void* send, void* recv, std::size_t bytes) {
    const comm::Communicator::SharedPlace s = comm.shared_place(send, bytes), r = comm.shared_place(recv, bytes);
    const int local = mem_->local_size(), me = mem_->local_rank();
    auto places = [&](int l) { return reinterpret_cast<Places*>(mem_->region(l) + kPlaceOffset); };
    *places(me) = Places{s.buffer, r.buffer, s.offset, r.offset};
    barrier_->arrive_and_wait();
    peer_send_.assign(static_cast<std::size_t>(local), nullptr);
    peer_recv_.assign(static_cast<std::size_t>(local), nullptr);
    for (int l = 0; l < local; ++l) {
      const Places q = *places(l);
      if (q.send_buffer < 0 || q.recv_buffer < 0) return false;
      const comm::NodeMemory& sm = comm.shared_buffer_memory(static_cast<int>(q.send_buffer));
      const comm::NodeMemory& rm = comm.shared_buffer_memory(static_cast<int>(q.recv_buffer));
      peer_send_[static_cast<std::size_t>(l)] = sm.region(l) + q.send_offset;
      peer_recv_[static_cast<std::size_t>(l)] = rm.region(l) + q.recv_offset;
    }
    return true;
  }

  // One chunk of m elements at element `off`, read and written in the ranks' shared buffers.
  void direct_chunk(std::size_t off, std::size_t m, comm::DataType type, comm::ReduceOp op, int p) {
    const std::size_t es = comm::size_of(type);
    const int local = mem_->local_size(), me = mem_->local_rank();
    const comm::ReduceOp sum_op = op == comm::ReduceOp::avg ? comm::ReduceOp::sum : op;
    const Blocks slices{m, static_cast<std::size_t>(local)};
    auto in = [&](int l, std::size_t slice) {
      return peer_send_[static_cast<std::size_t>(l)] + (off + slices.offset(slice)) * es;
    };
    auto out = [&](int l, std::size_t slice) {
      return peer_recv_[static_cast<std::size_t>(l)] + (off + slices.offset(slice)) * es;
    };
    const auto mine = static_cast<std::size_t>(me);
    const std::size_t n = slices.size(mine);
    if (n > 0) {
      // This rank's own input first: in place, the output is that input, and every other rank's
      // is added to it once.
      unsigned char* o = out(me, mine);
      if (local == 1) {
        if (o != in(me, mine)) std::memcpy(o, in(me, mine), n * es);
      } else {
        const int first = me == 0 ? 1 : 0;
        comm::reduce_to(o, in(me, mine), in(first, mine), n, type, sum_op);
        for (int l = 0; l < local; ++l) {
          if (l != me && l != first) comm::reduce_into(o, in(l, mine), n, type, sum_op);
        }
      }
      if (group_) ring_->run(*group_, o, o, n, type, sum_op, 0);
      comm::finish_reduction(o, n, type, op, p);
    }
    barrier_->arrive_and_wait();
    for (int l = 0; l < local; ++l) {
      const auto li = static_cast<std::size_t>(l);
      if (l != me && slices.size(li) > 0) std::memcpy(out(me, li), out(l, li), slices.size(li) * es);
    }
  }

  // The node memory and, across nodes, the group of ranks this rank's slices travel with: set up
  // at the first call on a communicator (collective, like the call itself).
  void attach(comm::Communicator& comm) {
    if (comm_ == &comm && size_ == comm.size()) return;
    mem_ = comm.node_memory(kRegionBytes);
    if (mem_ == nullptr) {
      throw_parameter(ErrorKind::usage, "algorithm",
                      "shm: backend " + comm.backend() + " has no memory shared between ranks; use ring or library");
    }
    comm_ = nullptr;  // until the layout below is known to work
    size_ = comm.size();
    barrier_ = std::make_unique<comm::NodeBarrier>(*mem_);
    next_ = 0;
    const int local = mem_->local_size();
    // Every rank's node (its lowest rank) and local rank, to find the ranks that share a slice.
    const int mine[3] = {mem_->node_ranks()[0], mem_->local_rank(), local};
    std::vector<int> all(3 * static_cast<std::size_t>(size_));
    comm.host_allgather(mine, all.data(), sizeof mine);
    std::vector<int> across;
    for (int r = 0; r < size_; ++r) {
      const int* info = &all[3 * static_cast<std::size_t>(r)];
      if (info[2] != local) {
        throw_parameter(ErrorKind::usage, "algorithm",
                        "shm: rank " + std::to_string(r) + " shares its node with " + std::to_string(info[2]) +
                            " ranks and rank " + std::to_string(comm.rank()) + " with " + std::to_string(local) +
                            "; the hierarchical allreduce needs the same number of ranks on every node "
                            "(use ring or library)");
      }
      if (info[1] == mem_->local_rank()) across.push_back(r);  // ascending rank: node order
    }
    nodes_ = static_cast<int>(across.size());
    group_.reset();
    if (nodes_ > 1) {
      group_ = std::make_unique<comm::RankGroup>(comm, std::move(across));
      if (!ring_) ring_ = make_algorithm(Collective::allreduce, "ring");
    }
    two_phase_ = local > 2 || nodes_ > 1;
    comm_ = &comm;
  }

  // Where the next chunk of `bytes` goes in every rank's ring (all ranks place it alike).
  std::size_t place(std::size_t bytes) {
    if (next_ + bytes > kRingBytes) next_ = 0;
    const std::size_t start = next_;
    next_ += (bytes + kLine - 1) / kLine * kLine;
    return start;
  }
  [[nodiscard]] unsigned char* staged(int local, std::size_t pos) const {
    return mem_->region(local) + kFlagArea + pos;
  }

  void chunk(const void* send, void* recv, std::size_t m, comm::DataType type, comm::ReduceOp op, int p) {
    const std::size_t es = comm::size_of(type);
    const int local = mem_->local_size(), me = mem_->local_rank();
    const std::size_t pos = place(m * es);
    const comm::ReduceOp sum_op = op == comm::ReduceOp::avg ? comm::ReduceOp::sum : op;
    std::memcpy(staged(me, pos), send, m * es);
    staged_bytes_ += m * es;
    barrier_->arrive_and_wait();
    if (!two_phase_) {
      const void* own = send;  // the bytes of staged(me, pos), in lines this core holds alone
      comm::reduce_to(recv, me == 0 ? own : staged(0, pos), me == 1 ? own : staged(1, pos), m, type, sum_op);
      comm::finish_reduction(recv, m, type, op, p);
      return;
    }
    const Blocks slices{m, static_cast<std::size_t>(local)};
    const std::size_t mine_off = slices.offset(static_cast<std::size_t>(me)) * es;
    const std::size_t mine_n = slices.size(static_cast<std::size_t>(me));
    unsigned char* s = staged(me, pos) + mine_off;
    for (int l = 0; l < local; ++l) {
      if (l != me && mine_n > 0) comm::reduce_into(s, staged(l, pos) + mine_off, mine_n, type, sum_op);
    }
    if (group_ && mine_n > 0) ring_->run(*group_, s, s, mine_n, type, sum_op, 0);
    comm::finish_reduction(s, mine_n, type, op, p);
    barrier_->arrive_and_wait();
    for (int l = 0; l < local; ++l) {
      const auto li = static_cast<std::size_t>(l);
      if (slices.size(li) > 0) {
        std::memcpy(at(recv, slices.offset(li), es), staged(l, pos) + slices.offset(li) * es, slices.size(li) * es);
      }
    }
  }

  comm::Communicator* comm_ = nullptr;
  comm::NodeMemory* mem_ = nullptr;  // owned by comm_
  int size_ = 0;
  int nodes_ = 1;
  bool two_phase_ = false;
  std::unique_ptr<comm::NodeBarrier> barrier_;  // flags at the start of each region
  std::size_t next_ = 0;  // where the next chunk goes in the rings
  std::unique_ptr<comm::RankGroup> group_;  // the ranks of this local rank on every node
  std::unique_ptr<Algorithm> ring_;         // between the nodes
  std::vector<unsigned char*> peer_send_, peer_recv_;  // direct path: every local rank's buffers
  std::uint64_t staged_bytes_ = 0;
};

// One node of p ranks, chunk by chunk as exchange() goes. At 2 ranks a chunk of m bytes is one
// Costs::staged step (copy in, flags, reduce from the own input and the peer's chunk); above, the copy in, two
// flag waits, p - 1 reductions of the rank's slice and the copy out. Across nodes the formula is
// not used: the executor needs the node layout, which (n, p) does not carry.
double cost(double n, int p, const Costs& c) {
  if (p < 2 || !(n > 0)) return 0.0;
  const double chunks = std::ceil(n / static_cast<double>(kChunkBytes));
  const double m = n / chunks;
  if (p <= 2) return chunks * c.staged(m);
  return chunks * (c.copy(m) + 2 * c.sync() + (p - 1) * c.reduce(m / p) + c.copy(m));
}

// Shared buffers, one node of p ranks: per chunk of m bytes, the rank's slice reduced from the p
// inputs ((p - 1) reductions of m/p), the other ranks' slices crossing between the cores twice (their
// inputs in, their results out: a copy of what another core has just written, (p - 1)m/p each
// way) and one flag wait; two flag waits more per call (publish the places, release the buffers).
double cost_shared(double n, int p, const Costs& c) {
  if (p < 2 || !(n > 0)) return 0.0;
  const double chunks = std::ceil(n / static_cast<double>(kChunkBytes));
  const double m = n / chunks, slice = m / p, others = m - slice;
  return chunks * ((p - 1) * c.reduce(slice) + 2 * c.peer_copy(others) + c.sync()) + 2 * c.sync();
}

std::unique_ptr<Algorithm> make() { return std::make_unique<ShmAllreduce>(); }

}  // namespace

extern const AlgorithmDescriptor kAllreduceShm{
    Collective::allreduce, "shm",
    "through node shared memory (MPI-3 window): each rank stages 256 KiB chunks and reduces from its peers' "
    "staged chunks directly; across nodes a ring between the nodes on each slice",
    "Open MPI's coll/sm and coll/xhc, NCCL's SHM transport inside a node", NcclAnalogue::none, &make, &cost,
    kChunkBytes, 0, /*host_only=*/true, &cost_shared, /*uniform_nodes=*/true};

}  // namespace scalelab::collectives
