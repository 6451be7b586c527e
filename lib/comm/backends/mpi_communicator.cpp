// The mpi backend (mpi_communicator.h). MPI counts are int: larger transfers go in chunks of at
// most max_chunk_ elements (or bytes), each its own MPI call. avg is MPI_SUM followed by one
// division (MPI has no average); float16 uses user-defined ops over a 2-byte datatype that call
// the shared reduction kernels.
#include "comm/backends/mpi_communicator.h"

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "comm/mpi_runtime.h"
#include "comm/reduce.h"
#include "core/error.h"

namespace scalelab::comm {
namespace {

void check(int rc, const char* what) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, text, &len);
  throw_comm(std::string("MPI ") + what + " failed: " + std::string(text, static_cast<std::size_t>(len)) +
             "; a peer rank may have failed (see its message)");
}

template <ReduceOp Op>
void half_user_op(void* in, void* inout, int* len, MPI_Datatype*) {
  reduce_into(inout, in, static_cast<std::size_t>(*len), DataType::f16, Op);
}

int as_int(std::size_t n) { return static_cast<int>(n); }

// Chunks of at most `chunk` a transfer of `n` is cut into; a transfer of 0 is one empty message.
std::size_t chunks(std::size_t n, std::size_t chunk) { return n == 0 ? 1 : (n + chunk - 1) / chunk; }

}  // namespace

MpiCommunicator::MpiCommunicator(std::size_t max_count_per_call, int node_block) : max_chunk_(max_count_per_call) {
  if (max_chunk_ == 0 || max_chunk_ > static_cast<std::size_t>(INT_MAX)) {
    throw_usage("MpiCommunicator: max_count_per_call " + std::to_string(max_chunk_) +
                " is outside 1.." + std::to_string(INT_MAX) + "; pass a count MPI's int can hold");
  }
  ensure_mpi_initialized();
  check(MPI_Comm_dup(MPI_COMM_WORLD, &comm_), "MPI_Comm_dup");
  MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
  check(MPI_Comm_split_type(comm_, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node_comm_), "MPI_Comm_split_type");
  MPI_Comm_size(node_comm_, &host_size_);
  if (node_block > 0) {
    int local = 0;
    MPI_Comm_rank(node_comm_, &local);
    MPI_Comm block = MPI_COMM_NULL;
    check(MPI_Comm_split(node_comm_, local / node_block, local, &block), "MPI_Comm_split");
    MPI_Comm_free(&node_comm_);
    node_comm_ = block;
  }
  MPI_Comm_set_errhandler(node_comm_, MPI_ERRORS_RETURN);
  MPI_Comm_rank(node_comm_, &local_rank_);
  MPI_Comm_size(node_comm_, &local_size_);
  {
    int sizes[2] = {local_size_, -local_size_}, extremes[2] = {0, 0};  // the largest node and the smallest
    check(MPI_Allreduce(sizes, extremes, 2, MPI_INT, MPI_MAX, comm_), "MPI_Allreduce");
    uniform_nodes_ = extremes[0] == -extremes[1];
  }
  {
    MPI_Group world_group = MPI_GROUP_NULL, node_group = MPI_GROUP_NULL;
    MPI_Comm_group(comm_, &world_group);
    MPI_Comm_group(node_comm_, &node_group);
    std::vector<int> locals(static_cast<std::size_t>(local_size_));
    for (int l = 0; l < local_size_; ++l) locals[static_cast<std::size_t>(l)] = l;
    node_ranks_.resize(locals.size());
    MPI_Group_translate_ranks(node_group, local_size_, locals.data(), world_group, node_ranks_.data());
    MPI_Group_free(&node_group);
    MPI_Group_free(&world_group);
  }
  MPI_Type_contiguous(2, MPI_BYTE, &half_type_);
  MPI_Type_commit(&half_type_);
  MPI_Op_create(&half_user_op<ReduceOp::sum>, 1, &half_ops_[0]);
  MPI_Op_create(&half_user_op<ReduceOp::min>, 1, &half_ops_[1]);
  MPI_Op_create(&half_user_op<ReduceOp::max>, 1, &half_ops_[2]);
}

NodeMemory* MpiCommunicator::node_memory(std::size_t bytes_per_rank) {
  // The window is never freed here but by MPI_Finalize: MPI_Win_free is collective over the node,
  // and a destructor that runs on one rank only (a rank unwinding from an error while its peers
  // wait in another call) would wait in it forever.
  // Whole pages, each region starting on a page of its own: Open MPI 4.1 lays the ranks' segments
  // end to end behind a small header (8-byte aligned only, whatever alloc_shared_noncontig says),
  // so every segment gets a page of slack and its region starts at the first page boundary in it.
  constexpr std::size_t kPage = kNodePageBytes;
  const std::size_t bytes = node_region_bytes(bytes_per_rank);
  const std::size_t segment = bytes + kPage;
  MPI_Info info = MPI_INFO_NULL;
  MPI_Info_create(&info);
  MPI_Info_set(info, "alloc_shared_noncontig", "true");
  void* base = nullptr;
  MPI_Win win = MPI_WIN_NULL;
  const int rc = MPI_Win_allocate_shared(static_cast<MPI_Aint>(segment), 1, info, node_comm_, &base, &win);
  MPI_Info_free(&info);
  check(rc, "MPI_Win_allocate_shared");
  auto aligned = [](void* p) {
    const auto a = (reinterpret_cast<std::uintptr_t>(p) + kPage - 1) / kPage * kPage;
    return reinterpret_cast<unsigned char*>(a);
  };
  std::vector<unsigned char*> regions(static_cast<std::size_t>(local_size_));
  std::string problem;
  for (int l = 0; l < local_size_; ++l) {
    MPI_Aint size = 0;
    int disp = 0;
    void* ptr = nullptr;
    check(MPI_Win_shared_query(win, l, &size, &disp, &ptr), "MPI_Win_shared_query");
    unsigned char* region = aligned(ptr);
    if (ptr == nullptr || region + bytes > static_cast<unsigned char*>(ptr) + size) {
      problem = "MPI_Win_shared_query gave local rank " + std::to_string(l) + " a segment of " +
                std::to_string(size) + " bytes, less than the " + std::to_string(segment) + " asked";
    }
    regions[static_cast<std::size_t>(l)] = region;
  }
  // Every rank of the node learns whether any had a problem, so that all fail together.
  int ok = problem.empty() ? 1 : 0, all_ok = 0;
  check(MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, node_comm_), "MPI_Allreduce");
  if (all_ok == 0) {
    MPI_Win_free(&win);
    throw_comm(problem.empty() ? "another rank of this node could not use its shared-memory window" : problem);
  }
  std::memset(regions[static_cast<std::size_t>(local_rank_)], 0, bytes);  // the owner touches its pages, once
  check(MPI_Barrier(node_comm_), "MPI_Barrier");  // every region is zeroed before any rank reads it
  // The peers' pages are not yet in this process's page tables: the first read of each is a page
  // fault. Take them all now rather than one by one inside the first collectives.
  for (int l = 0; l < local_size_; ++l) {
    if (l == local_rank_) continue;
    const volatile unsigned char* r = regions[static_cast<std::size_t>(l)];
    for (std::size_t off = 0; off < bytes; off += kPage) (void)r[off];
  }
  node_memories_.push_back(
      std::make_unique<NodeMemory>(local_rank_, node_ranks_, std::move(regions), bytes, host_size_));
  return node_memories_.back().get();
}

MpiCommunicator::~MpiCommunicator() {
  if (!mpi_active()) return;  // MPI already finalised: its objects are gone with it
  if (node_comm_ != MPI_COMM_NULL) MPI_Comm_free(&node_comm_);
  for (MPI_Op& op : half_ops_) {
    if (op != MPI_OP_NULL) MPI_Op_free(&op);
  }
  if (half_type_ != MPI_DATATYPE_NULL) MPI_Type_free(&half_type_);
  if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
}

MPI_Datatype MpiCommunicator::mpi_type(DataType t) const {
  switch (t) {
    case DataType::f32: return MPI_FLOAT;
    case DataType::f64: return MPI_DOUBLE;
    case DataType::i32: return MPI_INT32_T;
    case DataType::f16: return half_type_;
  }
  return MPI_DATATYPE_NULL;
}

MPI_Op MpiCommunicator::mpi_op(DataType t, ReduceOp op) const {
  if (t == DataType::f16) {
    switch (op) {
      case ReduceOp::sum:
      case ReduceOp::avg: return half_ops_[0];
      case ReduceOp::min: return half_ops_[1];
      case ReduceOp::max: return half_ops_[2];
    }
  }
  switch (op) {
    case ReduceOp::sum:
    case ReduceOp::avg: return MPI_SUM;
    case ReduceOp::min: return MPI_MIN;
    case ReduceOp::max: return MPI_MAX;
  }
  return MPI_OP_NULL;
}

void MpiCommunicator::send(const void* buf, std::size_t bytes, int dst, int tag) {
  const auto* p = static_cast<const char*>(buf);
  do {
    const std::size_t n = std::min(bytes, max_chunk_);
    check(MPI_Send(p, as_int(n), MPI_BYTE, dst, tag, comm_), "MPI_Send");
    p += n;
    bytes -= n;
  } while (bytes > 0);
}

void MpiCommunicator::recv(void* buf, std::size_t bytes, int src, int tag) {
  auto* p = static_cast<char*>(buf);
  do {
    const std::size_t n = std::min(bytes, max_chunk_);
    check(MPI_Recv(p, as_int(n), MPI_BYTE, src, tag, comm_, MPI_STATUS_IGNORE), "MPI_Recv");
    p += n;
    bytes -= n;
  } while (bytes > 0);
}

void MpiCommunicator::sendrecv(const void* sendbuf, std::size_t send_bytes, int dst, void* recvbuf,
                               std::size_t recv_bytes, int src, int tag) {
  const auto* s = static_cast<const char*>(sendbuf);
  auto* r = static_cast<char*>(recvbuf);
  if (send_bytes <= max_chunk_ && recv_bytes <= max_chunk_) {
    check(MPI_Sendrecv(s, as_int(send_bytes), MPI_BYTE, dst, tag, r, as_int(recv_bytes), MPI_BYTE, src, tag, comm_,
                       MPI_STATUS_IGNORE),
          "MPI_Sendrecv");
    return;
  }
  // Each direction goes in as many messages as its own size needs, exactly what the peer's send
  // or recv of that size expects: in a ring the neighbours' sizes differ, so padding the shorter
  // direction with empty messages would leave them for the peer's next call. Step k posts chunk
  // k of each direction that has one and waits for both.
  const std::size_t send_chunks = chunks(send_bytes, max_chunk_), recv_chunks = chunks(recv_bytes, max_chunk_);
  for (std::size_t k = 0; k < std::max(send_chunks, recv_chunks); ++k) {
    MPI_Request req[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    if (k < recv_chunks) {
      const std::size_t nr = std::min(recv_bytes - k * max_chunk_, max_chunk_);
      check(MPI_Irecv(r + k * max_chunk_, as_int(nr), MPI_BYTE, src, tag, comm_, &req[0]), "MPI_Irecv");
    }
    if (k < send_chunks) {
      const std::size_t ns = std::min(send_bytes - k * max_chunk_, max_chunk_);
      check(MPI_Isend(s + k * max_chunk_, as_int(ns), MPI_BYTE, dst, tag, comm_, &req[1]), "MPI_Isend");
    }
    check(MPI_Waitall(2, req, MPI_STATUSES_IGNORE), "MPI_Waitall");
  }
}

void MpiCommunicator::allreduce(const void* sendbuf, void* recvbuf, std::size_t count, DataType type,
                                ReduceOp op) {
  const std::size_t es = size_of(type);
  for (std::size_t off = 0; off < count; off += max_chunk_) {
    const std::size_t n = std::min(count - off, max_chunk_);
    void* r = static_cast<char*>(recvbuf) + off * es;
    const void* s = sendbuf == recvbuf ? MPI_IN_PLACE : static_cast<const char*>(sendbuf) + off * es;
    check(MPI_Allreduce(s, r, as_int(n), mpi_type(type), mpi_op(type, op), comm_), "MPI_Allreduce");
  }
  finish_reduction(recvbuf, count, type, op, size_);
}

void MpiCommunicator::broadcast(void* buf, std::size_t count, DataType type, int root) {
  const std::size_t es = size_of(type);
  for (std::size_t off = 0; off < count; off += max_chunk_) {
    const std::size_t n = std::min(count - off, max_chunk_);
    check(MPI_Bcast(static_cast<char*>(buf) + off * es, as_int(n), mpi_type(type), root, comm_), "MPI_Bcast");
  }
}

void MpiCommunicator::allgather(const void* sendbuf, void* recvbuf, std::size_t count, DataType type) {
  const std::size_t es = size_of(type);
  auto* out = static_cast<char*>(recvbuf);
  const bool in_place = sendbuf == out + static_cast<std::size_t>(rank_) * count * es;
  if (count <= max_chunk_) {
    check(MPI_Allgather(in_place ? MPI_IN_PLACE : sendbuf, as_int(count), mpi_type(type), out,
                        as_int(count), mpi_type(type), comm_),
          "MPI_Allgather");
    return;
  }
  // Beyond int counts: every rank broadcasts its block in chunks.
  if (!in_place) std::memcpy(out + static_cast<std::size_t>(rank_) * count * es, sendbuf, count * es);
  for (int r = 0; r < size_; ++r) broadcast(out + static_cast<std::size_t>(r) * count * es, count, type, r);
}

void MpiCommunicator::reduce_scatter(const void* sendbuf, void* recvbuf, std::size_t count, DataType type,
                                     ReduceOp op) {
  const std::size_t es = size_of(type);
  const auto* in = static_cast<const char*>(sendbuf);
  const bool in_place = recvbuf == in + static_cast<std::size_t>(rank_) * count * es;
  if (count <= max_chunk_) {
    if (in_place) {
      // MPI's in-place form reads the whole input from recvbuf and leaves block `rank` at its
      // start; ours keeps it at send + rank * count, so move it there (block 0 of the input is
      // overwritten, as in-place allows).
      auto* whole = const_cast<char*>(in);
      check(MPI_Reduce_scatter_block(MPI_IN_PLACE, whole, as_int(count), mpi_type(type), mpi_op(type, op), comm_),
            "MPI_Reduce_scatter_block");
      if (rank_ != 0) std::memmove(recvbuf, whole, count * es);
    } else {
      check(MPI_Reduce_scatter_block(in, recvbuf, as_int(count), mpi_type(type), mpi_op(type, op), comm_),
            "MPI_Reduce_scatter_block");
    }
  } else {
    for (int r = 0; r < size_; ++r) {
      for (std::size_t off = 0; off < count; off += max_chunk_) {
        const std::size_t n = std::min(count - off, max_chunk_);
        const char* s = in + (static_cast<std::size_t>(r) * count + off) * es;
        char* d = static_cast<char*>(recvbuf) + off * es;
        const bool mine = r == rank_;
        check(MPI_Reduce(mine && in_place ? MPI_IN_PLACE : s, mine ? d : nullptr, as_int(n), mpi_type(type),
                         mpi_op(type, op), r, comm_),
              "MPI_Reduce");
      }
    }
  }
  finish_reduction(recvbuf, count, type, op, size_);
}

void MpiCommunicator::barrier() { check(MPI_Barrier(comm_), "MPI_Barrier"); }

void MpiCommunicator::host_allgather(const void* send, void* recv, std::size_t bytes_per_rank) {
  check(MPI_Allgather(send, as_int(bytes_per_rank), MPI_BYTE, recv, as_int(bytes_per_rank), MPI_BYTE, comm_),
        "MPI_Allgather");
}

void MpiCommunicator::abort(const std::string& message, int exit_code) {
  std::fprintf(stderr, "scalelab: rank %d: %s\n", rank_, message.c_str());
  std::fflush(stderr);
  MPI_Abort(comm_ != MPI_COMM_NULL ? comm_ : MPI_COMM_WORLD, exit_code);
  std::abort();  // MPI_Abort does not return; this keeps [[noreturn]] honest
}

}  // namespace scalelab::comm
