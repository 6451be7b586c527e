// What every collective algorithm file shares: a base class holding the name and the reusable
// scratch buffer, the base of the point-to-point algorithms (which does the checks and the
// trivial cases they all share), the block partition of a buffer among ranks, and small pointer
// helpers.
// Internal to collectives/: users go through algorithm.h's make_algorithm.
#pragma once
#include <algorithm>
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "collectives/algorithm.h"
#include "comm/reduce.h"

namespace scalelab::collectives {

// A byte buffer grown on demand and never shrunk, so calls after the first at a given size
// allocate nothing. Growth value-initialises the bytes, which touches every page up front
// instead of paying page faults in the middle of a transfer.
class Scratch {
 public:
  [[nodiscard]] unsigned char* get(std::size_t bytes) {
    if (bytes > buf_.size()) {
      buf_.clear();
      buf_.shrink_to_fit();
      buf_.resize(bytes);
    }
    return buf_.data();
  }
  [[nodiscard]] std::size_t capacity() const { return buf_.size(); }

 private:
  std::vector<unsigned char> buf_;
};

// `count` elements split into `parts` contiguous blocks as evenly as possible: the first
// count % parts blocks hold one element more.
struct Blocks {
  std::size_t count;
  std::size_t parts;
  [[nodiscard]] std::size_t size(std::size_t i) const { return count / parts + (i < count % parts ? 1 : 0); }
  [[nodiscard]] std::size_t offset(std::size_t i) const {
    return i * (count / parts) + std::min(i, count % parts);
  }
  [[nodiscard]] std::size_t largest() const { return size(0); }
};

// Byte pointer `elems` elements of `elem_bytes` past `base`.
[[nodiscard]] inline unsigned char* at(void* base, std::size_t elems, std::size_t elem_bytes) {
  return static_cast<unsigned char*>(base) + elems * elem_bytes;
}
[[nodiscard]] inline const unsigned char* at(const void* base, std::size_t elems, std::size_t elem_bytes) {
  return static_cast<const unsigned char*>(base) + elems * elem_bytes;
}
[[nodiscard]] inline int mod(int a, int p) { return ((a % p) + p) % p; }
// The largest power of two not above p (p >= 1).
[[nodiscard]] inline int floor_pow2(int p) {
  int v = 1;
  while (v * 2 <= p) v *= 2;
  return v;
}

// The usual way to run a power-of-two algorithm on any rank count p: with pof2 the largest power
// of two not above p and rem = p - pof2, ranks 0..2rem-1 pair up (2i, 2i+1); the even one hands
// its data to the odd one and sits out, and the pof2 remaining ranks are renumbered 0..pof2-1.
// Afterwards each odd rank hands the result back to its even partner.
struct Fold {
  Fold(int rank, int p) : pof2(floor_pow2(p)), rem(p - floor_pow2(p)) {
    if (rank < 2 * rem) {
      newrank = rank % 2 == 1 ? rank / 2 : -1;
    } else {
      newrank = rank - rem;
    }
  }
  // The real rank of new rank v.
  [[nodiscard]] int real(int v) const { return v < rem ? 2 * v + 1 : v + rem; }
  [[nodiscard]] bool sits_out() const { return newrank < 0; }
  // True for the odd rank of a pair (it serves an even partner at rank - 1).
  [[nodiscard]] bool has_partner(int rank) const { return rank < 2 * rem && rank % 2 == 1; }

  int pof2;
  int rem;
  int newrank = -1;
};

class AlgorithmBase : public Algorithm {
 public:
  AlgorithmBase(std::string_view name, Collective c) : name_(name), collective_(c) {}
  [[nodiscard]] std::string_view name() const override { return name_; }
  [[nodiscard]] Collective collective() const override { return collective_; }
  [[nodiscard]] std::size_t scratch_bytes() const override { return scratch_.capacity() + scratch2_.capacity(); }

 protected:
  Scratch scratch_;
  Scratch scratch2_;

 private:
  std::string name_;
  Collective collective_;
};

// Base of every algorithm built from point-to-point calls. run() does what all of them do first:
// it requires host memory (they reduce and copy with the CPU), returns at once for count 0, and
// at one rank copies the input to the output (for all four collectives the result is then
// count elements equal to the input; nothing is copied in place). Only then does it call
// exchange(), so an algorithm's exchange() sees count > 0 and at least two ranks.
class PointToPointAlgorithm : public AlgorithmBase {
 public:
  using AlgorithmBase::AlgorithmBase;
  void run(comm::Communicator& comm, const void* send, void* recv, std::size_t count, comm::DataType type,
           comm::ReduceOp op, int root) final;

 protected:
  virtual void exchange(comm::Communicator& comm, const void* send, void* recv, std::size_t count,
                        comm::DataType type, comm::ReduceOp op, int root) = 0;
};

// Each algorithm file defines one `const AlgorithmDescriptor` (at namespace scope, external
// linkage); algorithm.cpp's table lists them.

// Message tags, one per algorithm, so a mismatch between ranks shows up as an error rather than
// as one algorithm's message consumed by another.
namespace tag {
inline constexpr int ring = 101, tree_up = 102, tree_down = 103, recursive_doubling = 104,
                     rabenseifner = 105, naive = 106, bcast_naive = 107, bcast_tree = 108,
                     bcast_ring = 109, allgather_ring = 110, allgather_rd = 111, reduce_scatter_ring = 112;
}

}  // namespace scalelab::collectives
