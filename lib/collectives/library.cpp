// `library`: the communicator's own collective (MPI_Allreduce, ncclAllReduce, ...), the baseline
// every point-to-point algorithm is compared with. Works in any memory space.
// Broadcast takes the root's data from `send` and leaves everyone's result in `recv` (as
// ncclBroadcast does); send == recv is the in-place form.
#include "collectives/algorithm_base.h"

namespace scalelab::collectives {
namespace {

class Library final : public AlgorithmBase {
 public:
  explicit Library(Collective c) : AlgorithmBase("library", c) {}

  void run(comm::Communicator& comm, const void* send, void* recv, std::size_t count, comm::DataType type,
           comm::ReduceOp op, int root) override {
    switch (collective()) {
      case Collective::allreduce: comm.allreduce(send, recv, count, type, op); return;
      case Collective::broadcast:
        if (comm.rank() == root) comm.local_copy(recv, send, count * comm::size_of(type));
        comm.broadcast(recv, count, type, root);
        return;
      case Collective::allgather: comm.allgather(send, recv, count, type); return;
      case Collective::reduce_scatter: comm.reduce_scatter(send, recv, count, type, op); return;
    }
  }
};

}  // namespace

namespace {
std::unique_ptr<Algorithm> make_allreduce() { return std::make_unique<Library>(Collective::allreduce); }
std::unique_ptr<Algorithm> make_broadcast() { return std::make_unique<Library>(Collective::broadcast); }
std::unique_ptr<Algorithm> make_allgather() { return std::make_unique<Library>(Collective::allgather); }
std::unique_ptr<Algorithm> make_reduce_scatter() { return std::make_unique<Library>(Collective::reduce_scatter); }
constexpr std::string_view kSummary = "the backend's own collective call (MPI's or NCCL's)";
constexpr std::string_view kAnalogue = "Open MPI's decision rules or NCCL's tuner, choosing per size and rank count";
}  // namespace

extern const AlgorithmDescriptor kAllreduceLibrary{Collective::allreduce, "library", kSummary, kAnalogue,
                                            NcclAnalogue::none, &make_allreduce, nullptr, 0, 0};
extern const AlgorithmDescriptor kBroadcastLibrary{Collective::broadcast, "library", kSummary, kAnalogue,
                                            NcclAnalogue::none, &make_broadcast, nullptr, 0, 0};
extern const AlgorithmDescriptor kAllgatherLibrary{Collective::allgather, "library", kSummary, kAnalogue,
                                            NcclAnalogue::none, &make_allgather, nullptr, 0, 0};
extern const AlgorithmDescriptor kReduceScatterLibrary{Collective::reduce_scatter, "library", kSummary, kAnalogue,
                                                NcclAnalogue::none, &make_reduce_scatter, nullptr, 0, 0};

}  // namespace scalelab::collectives
