// A collective algorithm: a small plug-in built from a Communicator's point-to-point calls
// (ring, tree, recursive doubling, Rabenseifner, naive), or `library`, which calls the
// communicator's own collective (MPI_Allreduce, ncclAllReduce). The benchmark, the trainer's
// gradient averaging, the cost model and the lessons all go through this one interface.
//
// Each algorithm is described once, by an AlgorithmDescriptor that its own file defines
// (collectives/<collective>_<algorithm>.cpp) and algorithm.cpp's table lists: its name, what it
// does, the NCCL / Open MPI algorithm it teaches, its factory, its cost formula over the
// primitives of costs.h (the model's and the simulator's), and the segment size its
// implementation cuts messages into. Adding an algorithm is one file plus one table row.
//
//   auto algo = make_algorithm(Collective::allreduce, "ring");
//   algo->run(comm, send, recv, count, DataType::f32, ReduceOp::sum, /*root=*/0);
//   double t = find_algorithm(Collective::allreduce, "ring").cost(64e6, 8, AlphaBeta(5e-6, 1e-10, 1e-10));
//
// An Algorithm object keeps the scratch buffers it needs and reuses them across calls (no
// allocation after the first call at a given size). It works for any rank count and any element
// count, 0 and fewer elements than ranks included. In-place: send == recv for allreduce and
// broadcast; send == recv + rank * count for allgather, recv == send + rank * count for
// reduce-scatter (NCCL's convention, communicator.h). Only host-memory communicators can run the
// point-to-point algorithms (they reduce on the CPU); `library` runs on any backend.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <span>

#include "collectives/costs.h"
#include "comm/communicator.h"

namespace scalelab::collectives {

enum class Collective { allreduce, broadcast, allgather, reduce_scatter };

[[nodiscard]] std::string_view name_of(Collective c);  // "allreduce", "broadcast", "allgather", "reduce-scatter"
[[nodiscard]] std::span<const Collective> all_collectives();  // the four, in that order
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
  // Bytes of callers' data this object has copied into staging memory so far, for algorithms that
  // stage (shm; 0 for the others): what the tests read to check that shared buffers
  // (Communicator::shared_buffer) are read in place.
  [[nodiscard]] virtual std::uint64_t staged_bytes() const { return 0; }
};

// The NCCL algorithm that moves data the same way, where there is one: the cost model prices a
// GPU run of such an algorithm with NCCL's own tuning model.
enum class NcclAnalogue { none, ring, tree };

struct AlgorithmDescriptor {
  Collective collective;
  std::string_view name;      // "ring": what --algo and the JSON records say
  std::string_view summary;   // one line for help texts: how it moves the data
  std::string_view analogue;  // the NCCL / Open MPI algorithm it teaches, in words
  NcclAnalogue nccl = NcclAnalogue::none;
  std::unique_ptr<Algorithm> (*make)() = nullptr;
  // Seconds one call takes for n bytes (allreduce, broadcast: the buffer; allgather and
  // reduce-scatter: all p blocks) over p ranks, following this implementation's message pattern
  // and segments. Null only for `library`, whose time is the backend's own choice (lib/model
  // models Open MPI's decision rules and NCCL's tuner).
  double (*cost)(double n, int p, const Costs& c) = nullptr;
  // How the implementation cuts its messages: segments of segment_bytes (0: whole blocks); with
  // max_segments > 0, segment_bytes is the smallest segment and a block is cut into at most that
  // many (the ring: blocks over 1 MiB in at most 4 segments).
  std::size_t segment_bytes = 0;
  std::size_t max_segments = 0;
  // Runs only where the ranks of a node share host memory (CPU ranks): the GPU model does not
  // price it (`predict` on GPUs says it is not available there).
  bool host_only = false;
  // Seconds when every rank's buffers are shared buffers (Communicator::shared_buffer) and the
  // algorithm reads them in place; null: the same as cost.
  double (*cost_shared)(double n, int p, const Costs& c) = nullptr;
  // Runs only where every node has the same number of ranks (Communicator::uniform_nodes); elsewhere
  // naming it is a usage error, and "auto" passes it over (collectives/choice.h).
  bool uniform_nodes = false;

  [[nodiscard]] bool is_library() const { return cost == nullptr; }
};

// Every algorithm of every collective, in the order help texts list them (library first).
[[nodiscard]] std::span<const AlgorithmDescriptor* const> algorithm_table();
// The algorithms available for a collective, in table order.
[[nodiscard]] std::vector<std::string> algorithm_names(Collective c);
// "library, ring, tree" for messages and help texts.
[[nodiscard]] std::string algorithm_list(Collective c);
// The descriptor of `name`; an unknown name is a usage error for parameter `parameter` that lists
// the valid names.
[[nodiscard]] const AlgorithmDescriptor& find_algorithm(Collective c, std::string_view name,
                                                        std::string_view parameter = "algorithm");
// Builds one (find_algorithm(c, name, parameter).make()).
[[nodiscard]] std::unique_ptr<Algorithm> make_algorithm(Collective c, std::string_view name,
                                                        std::string_view parameter = "algorithm");

}  // namespace scalelab::collectives
