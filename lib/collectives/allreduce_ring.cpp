// Ring allreduce: a reduce-scatter then an allgather around the ring r -> r+1, each p-1 steps.
//
//   step s of the reduce-scatter: send block (r - s), receive block (r - s - 1) and add it to
//   our own copy of that block. After p-1 steps rank r holds block (r + 1) fully reduced.
//   step s of the allgather: send block (r + 1 - s), receive block (r - s) in place.
//
// Every rank sends and receives 2 (p-1)/p of the buffer, the bandwidth lower bound, hence the
// algorithm NCCL and Horovod use for large messages. Blocks of the reduce-scatter travel in
// segments: each received segment is reduced while it is still in cache, and the scratch buffer
// is one segment, not one block. Segments are at least kMinSegmentBytes (per-message overhead)
// and at most kMaxSegments per step: every message is a point where both ranks must be running,
// and on a loaded (oversubscribed) machine each one can cost a scheduler time slice. Out of
// place, the first reduction of each block reads the send buffer directly, so no initial copy
// of the input is made.
#include "collectives/algorithm_base.h"
#include "collectives/cost_formulas.h"

#include <cmath>

namespace scalelab::collectives {
namespace {

// A block of up to 1 MiB (this machine's L2 per core) goes as one message; larger blocks in at
// most 4 segments (two ranks' segments then still fit the 32 MiB L3 at a 64 MiB allreduce).
constexpr std::size_t kMinSegmentBytes = 1024 * 1024;
constexpr std::size_t kMaxSegments = 4;

class RingAllreduce final : public PointToPointAlgorithm {
 public:
  RingAllreduce() : PointToPointAlgorithm("ring", Collective::allreduce) {}

 private:
  void exchange(comm::Communicator& comm, const void* send, void* recv, std::size_t count, comm::DataType type,
                comm::ReduceOp op, int /*root*/) override {
    const int p = comm.size(), r = comm.rank();
    const std::size_t es = comm::size_of(type);
    const int right = mod(r + 1, p), left = mod(r - 1, p);
    const Blocks blocks{count, static_cast<std::size_t>(p)};
    // Every rank cuts every step into the same number of segments (from the largest block), so
    // both ends of each exchange make the same number of calls; trailing pieces may be empty.
    const std::size_t seg = std::max({std::size_t{1}, kMinSegmentBytes / es,
                                      (blocks.largest() + kMaxSegments - 1) / kMaxSegments});
    const std::size_t nseg = (blocks.largest() + seg - 1) / seg;
    unsigned char* tmp = scratch_.get(std::min(seg, blocks.largest()) * es);

    for (int s = 0; s < p - 1; ++s) {
      const auto sb = static_cast<std::size_t>(mod(r - s, p)), rb = static_cast<std::size_t>(mod(r - s - 1, p));
      const void* src = s == 0 ? send : recv;  // block sb is still our raw input at step 0
      for (std::size_t k = 0; k < nseg; ++k) {
        const std::size_t off = k * seg;
        const std::size_t ns = piece(blocks.size(sb), off, seg), nr = piece(blocks.size(rb), off, seg);
        comm.sendrecv(at(src, blocks.offset(sb) + off, es), ns * es, right, tmp, nr * es, left, tag::ring);
        comm::reduce_to(at(recv, blocks.offset(rb) + off, es), at(send, blocks.offset(rb) + off, es), tmp, nr,
                        type, op);
      }
    }
    const auto mine = static_cast<std::size_t>(mod(r + 1, p));
    comm::finish_reduction(at(recv, blocks.offset(mine), es), blocks.size(mine), type, op, p);

    for (int s = 0; s < p - 1; ++s) {
      const auto sb = static_cast<std::size_t>(mod(r + 1 - s, p)), rb = static_cast<std::size_t>(mod(r - s, p));
      comm.sendrecv(at(recv, blocks.offset(sb), es), blocks.size(sb) * es, right, at(recv, blocks.offset(rb), es),
                    blocks.size(rb) * es, left, tag::ring);
    }
  }

  // Elements of a block of `n` that segment starting at `off` covers (0 past the end).
  static std::size_t piece(std::size_t n, std::size_t off, std::size_t seg) {
    return off >= n ? 0 : std::min(seg, n - off);
  }
};

}  // namespace

double ring_allreduce(double n, int p, const Costs& c, double segment) {
  return ring_reduce_scatter(n, p, c, segment) + ring_allgather(n, p, c);
}

namespace {
// The segment exchange() uses for blocks of `block` bytes.
double implementation_segment(double block) {
  return std::max(static_cast<double>(kMinSegmentBytes), std::ceil(block / static_cast<double>(kMaxSegments)));
}
double cost(double n, int p, const Costs& c) { return p < 2 ? 0.0 : ring_allreduce(n, p, c, implementation_segment(n / p)); }
std::unique_ptr<Algorithm> make() { return std::make_unique<RingAllreduce>(); }
}  // namespace

extern const AlgorithmDescriptor kAllreduceRing{
    Collective::allreduce, "ring",
    "reduce-scatter then allgather around the ring: 2(p-1) steps, 2(p-1)/p of the buffer per rank",
    "NCCL's Ring; Open MPI's ring (coll/tuned algorithm 4)", NcclAnalogue::ring, &make, &cost, kMinSegmentBytes, kMaxSegments};

}  // namespace scalelab::collectives
