// Naive allreduce, the parameter-server pattern: every rank sends its buffer to rank 0, which
// combines them and sends the result back to each. Rank 0 moves 2 (p-1) n bytes through one link
// while the others idle, so the time grows linearly with p: the bottleneck the ring removes.
#include "collectives/algorithm_base.h"

namespace scalelab::collectives {
namespace {

class NaiveAllreduce final : public PointToPointAlgorithm {
 public:
  NaiveAllreduce() : PointToPointAlgorithm("naive", Collective::allreduce) {}

 private:
  void exchange(comm::Communicator& comm, const void* send, void* recv, std::size_t count, comm::DataType type,
                comm::ReduceOp op, int /*root*/) override {
    const int p = comm.size(), r = comm.rank();
    const std::size_t es = comm::size_of(type), bytes = count * es;
    if (r != 0) {
      comm.send(send, bytes, 0, tag::naive);
      comm.recv(recv, bytes, 0, tag::naive);
      return;
    }
    unsigned char* tmp = scratch_.get(bytes);
    const void* partial = send;
    for (int q = 1; q < p; ++q) {
      comm.recv(tmp, bytes, q, tag::naive);
      comm::reduce_to(recv, partial, tmp, count, type, op);
      partial = recv;
    }
    comm::finish_reduction(recv, count, type, op, p);
    for (int q = 1; q < p; ++q) comm.send(recv, bytes, q, tag::naive);
  }
};

}  // namespace

std::unique_ptr<Algorithm> make_allreduce_naive() { return std::make_unique<NaiveAllreduce>(); }

}  // namespace scalelab::collectives
