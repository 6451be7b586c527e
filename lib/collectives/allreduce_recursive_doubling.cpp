// Recursive-doubling allreduce: log2(p) rounds; in round k each rank swaps its whole partial
// result with the rank whose (renumbered) index differs in bit k, and both combine. Few
// messages (good for small buffers), but every round moves the whole buffer: lg p * n bytes.
// Non-powers of two fold the extra ranks in first and hand them the result at the end (Fold).
#include "collectives/algorithm_base.h"

namespace scalelab::collectives {
namespace {

class RecursiveDoublingAllreduce final : public PointToPointAlgorithm {
 public:
  RecursiveDoublingAllreduce() : PointToPointAlgorithm("recursive_doubling", Collective::allreduce) {}

 private:
  void exchange(comm::Communicator& comm, const void* send, void* recv, std::size_t count, comm::DataType type,
                comm::ReduceOp op, int /*root*/) override {
    const int p = comm.size(), r = comm.rank();
    const std::size_t es = comm::size_of(type), bytes = count * es;
    const Fold fold(r, p);
    unsigned char* tmp = scratch_.get(bytes);
    const void* partial = send;  // our current partial result
    if (fold.sits_out()) {
      comm.send(send, bytes, r + 1, tag::recursive_doubling);
    } else if (fold.has_partner(r)) {
      comm.recv(tmp, bytes, r - 1, tag::recursive_doubling);
      comm::reduce_to(recv, send, tmp, count, type, op);
      partial = recv;
    }
    if (!fold.sits_out()) {
      for (int mask = 1; mask < fold.pof2; mask <<= 1) {
        const int partner = fold.real(fold.newrank ^ mask);
        comm.sendrecv(partial, bytes, partner, tmp, bytes, partner, tag::recursive_doubling);
        comm::reduce_to(recv, partial, tmp, count, type, op);
        partial = recv;
      }
      comm::finish_reduction(recv, count, type, op, p);
    }
    if (fold.sits_out()) {
      comm.recv(recv, bytes, r + 1, tag::recursive_doubling);
    } else if (fold.has_partner(r)) {
      comm.send(recv, bytes, r - 1, tag::recursive_doubling);
    }
  }
};

}  // namespace

std::unique_ptr<Algorithm> make_allreduce_recursive_doubling() {
  return std::make_unique<RecursiveDoublingAllreduce>();
}

}  // namespace scalelab::collectives
