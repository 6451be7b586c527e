// A collective algorithm: a small plug-in built from a Communicator's point-to-point calls
// (ring, tree, recursive doubling, Rabenseifner, naive), or `library`, which calls the
// communicator's own collective (MPI_Allreduce, ncclAllReduce). The benchmark, the trainer's
// gradient averaging and the lessons all go through this one interface.
//
//   auto algo = make_algorithm(Collective::allreduce, "ring");
//   algo->run(comm, send, recv, count, DataType::f32, ReduceOp::sum, /*root=*/0);
//
// An Algorithm object keeps the scratch buffers it needs and reuses them across calls (no
// allocation after the first call at a given size). It works for any rank count and any element
// count, 0 and fewer elements than ranks included. In-place: send == recv for allreduce and
// broadcast; send == recv + rank * count for allgather, recv == send + rank * count for
// reduce-scatter (NCCL's convention, communicator.h). Only host-memory communicators can run the
// point-to-point algorithms (they reduce on the CPU); `library` runs on any backend.
#pragma once
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "comm/communicator.h"

namespace scalelab::collectives {

enum class Collective { allreduce, broadcast, allgather, reduce_scatter };

[[nodiscard]] std::string_view name_of(Collective c);  // "allreduce", "broadcast", "allgather", "reduce-scatter"
[[nodiscard]] Collective parse_collective(std::string_view text, std::string_view what);
// nccl-tests' bus-bandwidth factor (its doc/PERFORMANCE.md): busbw = algbw x factor, with
// allreduce 2(n-1)/n, allgather and reduce-scatter (n-1)/n, broadcast 1. At one rank allreduce,
// allgather and reduce-scatter move nothing, so the factor is 0, as nccl-tests prints.
[[nodiscard]] double busbw_factor(Collective c, int nranks);

class Algorithm {
 public:
  virtual ~Algorithm() = default;
  [[nodiscard]] virtual std::string_view name() const = 0;  // "ring"
  [[nodiscard]] virtual Collective collective() const = 0;
  // Same semantics as the Communicator collective of this kind. `count` is the elements in the
  // buffer for allreduce and broadcast, and the elements per rank for allgather and
  // reduce-scatter. `op` is ignored by broadcast and allgather, `root` by all but broadcast.
  virtual void run(comm::Communicator& comm, const void* send, void* recv, std::size_t count,
                   comm::DataType type, comm::ReduceOp op, int root) = 0;
  // Bytes of scratch this object holds now (grown on demand, never shrunk, reused by later
  // calls): what the tests read to check that a second call at the same size allocates nothing.
  [[nodiscard]] virtual std::size_t scratch_bytes() const { return 0; }
};

// The algorithms available for a collective, in the order help text lists them.
[[nodiscard]] std::vector<std::string> algorithm_names(Collective c);
// Builds one; an unknown name is a usage error naming `what` and the valid names.
[[nodiscard]] std::unique_ptr<Algorithm> make_algorithm(Collective c, std::string_view name,
                                                        std::string_view what = "--algo");

}  // namespace scalelab::collectives
