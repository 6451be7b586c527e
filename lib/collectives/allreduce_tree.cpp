// Binary-tree allreduce: reduce up the tree to rank 0, then broadcast down the same tree.
// Rank i's children are 2i+1 and 2i+2, its parent (i-1)/2.
//
//            0            level 0
//          /   \          level 1
//         1     2
//        / \   /          level 2
//       3   4 5
//
// `tree` moves the whole buffer as one message per edge: latency 2 log2(p) hops but every byte
// crosses every level. `tree_pipelined` cuts the buffer into segments and runs reduce and
// broadcast segment by segment, so different levels of the tree work on different segments at
// once (the idea behind NCCL's tree algorithm). The scratch buffer holds one segment.
#include "collectives/algorithm_base.h"
#include "collectives/cost_formulas.h"
#include "collectives/cost_parts.h"

namespace scalelab::collectives {
namespace {

constexpr std::size_t kPipelineSegmentBytes = 128 * 1024;

class TreeAllreduce final : public PointToPointAlgorithm {
 public:
  TreeAllreduce(std::string_view name, std::size_t segment_bytes)
      : PointToPointAlgorithm(name, Collective::allreduce), segment_bytes_(segment_bytes) {}

 private:
  void exchange(comm::Communicator& comm, const void* send, void* recv, std::size_t count, comm::DataType type,
                comm::ReduceOp op, int /*root*/) override {
    const int p = comm.size(), r = comm.rank();
    const std::size_t es = comm::size_of(type);
    const int parent = r == 0 ? -1 : (r - 1) / 2;
    const int children[2] = {2 * r + 1, 2 * r + 2};
    const std::size_t seg = segment_bytes_ == 0 ? count : std::max<std::size_t>(1, segment_bytes_ / es);
    unsigned char* tmp = scratch_.get(std::min(seg, count) * es);

    for (std::size_t off = 0; off < count; off += seg) {
      const std::size_t n = std::min(seg, count - off);
      const void* mine = at(send, off, es);
      void* out = at(recv, off, es);
      // Up: combine the children's partial sums with ours, pass the result to the parent.
      const void* partial = mine;
      for (const int c : children) {
        if (c >= p) continue;
        comm.recv(tmp, n * es, c, tag::tree_up);
        comm::reduce_to(out, partial, tmp, n, type, op);
        partial = out;
      }
      if (parent >= 0) {
        comm.send(partial, n * es, parent, tag::tree_up);
        // Down: the total arrives from the parent and goes on to the children.
        comm.recv(out, n * es, parent, tag::tree_down);
      } else {
        comm::finish_reduction(out, n, type, op, p);
      }
      for (const int c : children) {
        if (c < p) comm.send(out, n * es, c, tag::tree_down);
      }
    }
  }

  std::size_t segment_bytes_;  // 0: the whole buffer at once
};

}  // namespace

double tree_allreduce(double n, int p, const Costs& c, double segment) {
  return cost_parts::pipelined_tree(n, p, c, segment, /*reduce=*/true);
}

namespace {
double whole_cost(double n, int p, const Costs& c) { return tree_allreduce(n, p, c); }
double pipelined_cost(double n, int p, const Costs& c) {
  return tree_allreduce(n, p, c, static_cast<double>(kPipelineSegmentBytes));
}
std::unique_ptr<Algorithm> make_whole() { return std::make_unique<TreeAllreduce>("tree", 0); }
std::unique_ptr<Algorithm> make_pipelined() {
  return std::make_unique<TreeAllreduce>("tree_pipelined", kPipelineSegmentBytes);
}
}  // namespace

extern const AlgorithmDescriptor kAllreduceTree{
    Collective::allreduce, "tree", "binary tree: reduce up to rank 0, broadcast down; whole buffer per edge",
    "NCCL's Tree (across nodes); Open MPI's binary tree", NcclAnalogue::tree, &make_whole, &whole_cost, 0, 0};
extern const AlgorithmDescriptor kAllreduceTreePipelined{
    Collective::allreduce, "tree_pipelined",
    "binary tree with the buffer in segments, so every level of the tree works at once",
    "NCCL's Tree (across nodes), which pipelines chunks the same way", NcclAnalogue::tree, &make_pipelined,
    &pipelined_cost, kPipelineSegmentBytes, 0};

}  // namespace scalelab::collectives
