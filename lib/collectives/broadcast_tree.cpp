// Binomial-tree broadcast: in round k every rank that already has the data sends it to the rank
// 2^k further on (counting from the root), so the number of holders doubles each round and the
// broadcast takes ceil(log2 p) rounds of whole-buffer messages. Ranks are renumbered relative to
// the root (v = rank - root mod p); v receives from v with its lowest set bit cleared.
#include "collectives/algorithm_base.h"

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

std::unique_ptr<Algorithm> make_broadcast_tree() { return std::make_unique<TreeBroadcast>(); }

}  // namespace scalelab::collectives
