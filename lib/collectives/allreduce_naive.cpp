// Naive allreduce, the parameter-server pattern: every rank sends its buffer to rank 0, which
// combines them and sends the result back to each. Rank 0 moves 2 (p-1) n bytes through one link
// while the others idle, so the time grows linearly with p: the bottleneck the ring removes.
#include "collectives/algorithm_base.h"
#include "collectives/cost_formulas.h"

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

double naive_allreduce(double n, int p, const Costs& c) {
  if (p < 2 || n <= 0) return 0.0;
  return (p - 1) * c.exchange_reduce(n) + (p - 1) * c.message(n);
}

namespace {
double cost(double n, int p, const Costs& c) { return naive_allreduce(n, p, c); }
std::unique_ptr<Algorithm> make() { return std::make_unique<NaiveAllreduce>(); }
}  // namespace

extern const AlgorithmDescriptor kAllreduceNaive{
    Collective::allreduce, "naive", "every rank sends to rank 0, which reduces and sends the result back",
    "a parameter server; Open MPI's basic_linear (coll/tuned algorithm 1)", NcclAnalogue::none, &make, &cost, 0,
    0};

}  // namespace scalelab::collectives
