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

std::unique_ptr<Algorithm> make_library(Collective c) { return std::make_unique<Library>(c); }

}  // namespace scalelab::collectives
