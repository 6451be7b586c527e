// Binomial-tree broadcast: in round k every rank that already has the data sends it to the rank
// 2^k further on (counting from the root), so the number of holders doubles each round and the
// broadcast takes ceil(log2 p) rounds of whole-buffer messages. Ranks are renumbered relative to
// the root (v = rank - root mod p); v receives from v with its lowest set bit cleared.
#include "collectives/algorithm_base.h"
#include "collectives/cost_formulas.h"
#include "collectives/cost_parts.h"

namespace scalelab::collectives {
namespace {

class TreeBroadcast final : public PointToPointAlgorithm {
 public:
  TreeBroadcast() : PointToPointAlgorithm("tree", Collective::broadcast) {}

 private:
  void exchange(comm::Communicator& comm, const void* send, void* recv, std::size_t count, comm::DataType type,
                comm::ReduceOp /*op*/, int root) override {
    const int p = comm.size(), r = comm.rank();
    const std::size_t bytes = count * comm::size_of(type);
    if (r == root) comm.local_copy(recv, send, bytes);
    const int v = mod(r - root, p);
    int mask = 1;
    while (mask < p) {  // find our parent: the lowest set bit of v
      if (v & mask) {
        comm.recv(recv, bytes, mod(v - mask + root, p), tag::bcast_tree);
        break;
      }
      mask <<= 1;
    }
    for (mask >>= 1; mask > 0; mask >>= 1) {  // then serve the children below that bit
      if (v + mask < p) comm.send(recv, bytes, mod(v + mask + root, p), tag::bcast_tree);
    }
  }
};

}  // namespace

double binomial_broadcast(double n, int p, const Costs& c) {
  if (p < 2 || n <= 0) return 0.0;
  // The root sends in every round, so the last holder has the data after ceil(log2 p) messages.
  const int k = cost_parts::floor_log2(p);
  return ((1 << k) == p ? k : k + 1) * c.message(n);
}

namespace {
double cost(double n, int p, const Costs& c) { return binomial_broadcast(n, p, c); }
std::unique_ptr<Algorithm> make() { return std::make_unique<TreeBroadcast>(); }
}  // namespace

extern const AlgorithmDescriptor kBroadcastTree{
    Collective::broadcast, "tree", "binomial tree: the ranks holding the data double every round",
    "Open MPI's binomial broadcast", NcclAnalogue::none, &make, &cost, 0, 0};

}  // namespace scalelab::collectives
