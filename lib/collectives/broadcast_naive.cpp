// Naive broadcast: the root sends the whole buffer to every other rank in turn. p-1 full
// messages leave one rank, so the time grows linearly with p; the tree and the ring fix that.
// Like every broadcast here: the root's data comes from `send`, the result lands in `recv`.
#include "collectives/algorithm_base.h"
#include "collectives/cost_formulas.h"

namespace scalelab::collectives {
namespace {

class NaiveBroadcast final : public PointToPointAlgorithm {
 public:
  NaiveBroadcast() : PointToPointAlgorithm("naive", Collective::broadcast) {}

 private:
  void exchange(comm::Communicator& comm, const void* send, void* recv, std::size_t count, comm::DataType type,
                comm::ReduceOp /*op*/, int root) override {
    const int p = comm.size(), r = comm.rank();
    const std::size_t bytes = count * comm::size_of(type);
    if (r == root) {
      comm.local_copy(recv, send, bytes);
      for (int q = 0; q < p; ++q) {
        if (q != root) comm.send(recv, bytes, q, tag::bcast_naive);
      }
    } else {
      comm.recv(recv, bytes, root, tag::bcast_naive);
    }
  }
};

}  // namespace

double naive_broadcast(double n, int p, const Costs& c) {
  if (p < 2 || n <= 0) return 0.0;
  return (p - 1) * c.message(n);
}

namespace {
double cost(double n, int p, const Costs& c) { return naive_broadcast(n, p, c); }
std::unique_ptr<Algorithm> make() { return std::make_unique<NaiveBroadcast>(); }
}  // namespace

extern const AlgorithmDescriptor kBroadcastNaive{
    Collective::broadcast, "naive", "the root sends the whole buffer to every other rank in turn",
    "Open MPI's basic_linear broadcast", NcclAnalogue::none, &make, &cost, 0, 0};

}  // namespace scalelab::collectives
