// Node shared memory under the local backend (comm/node_memory.h), the flag barrier through it
// (comm/node_barrier.h) and point-to-point over a group of ranks (comm/rank_group.h): what the
// shared-memory allreduce is built from. Above all, a rank waiting at a flag for a peer that failed
// or returned fails instead of spinning forever.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "comm/local.h"
#include "comm/node_barrier.h"
#include "comm/rank_group.h"
#include "core/error.h"

namespace scalelab::comm {
namespace {

TEST(NodeMemory, EveryRankSeesEveryRegionPageAlignedAndZeroed) {
  run_local(3, [](Communicator& comm) {
    NodeMemory* mem = comm.node_memory(5000);
    ASSERT_NE(mem, nullptr);
    EXPECT_EQ(mem->local_size(), 3);
    EXPECT_EQ(mem->local_rank(), comm.rank());
    EXPECT_EQ(mem->region_bytes(), 8192u);  // whole pages
    EXPECT_EQ(std::vector<int>(mem->node_ranks().begin(), mem->node_ranks().end()), (std::vector<int>{0, 1, 2}));
    for (int l = 0; l < 3; ++l) {
      EXPECT_EQ(reinterpret_cast<std::uintptr_t>(mem->region(l)) % 4096, 0u);
      EXPECT_EQ(mem->region(l)[0], 0);
      EXPECT_EQ(mem->region(l)[8191], 0);
    }
  });
}

// Shared buffers: where a pointer lies in them, and a buffer given back is reused (zeroed) by the
// next request that fits, on every rank alike, while a larger request makes a new one.
TEST(SharedBuffer, PlacesPointersAndReusesWhatWasGivenBack) {
  run_local(3, [](Communicator& comm) {
    EXPECT_FALSE(comm.has_shared_buffers());
    unsigned char* a = comm.shared_buffer(1000);
    ASSERT_NE(a, nullptr);
    EXPECT_TRUE(comm.has_shared_buffers());
    const Communicator::SharedPlace in = comm.shared_place(a + 10, 990);
    EXPECT_EQ(in.buffer, 0);
    EXPECT_EQ(in.offset, 10U);
    EXPECT_EQ(comm.shared_place(a + 10, 1u << 20).buffer, -1) << "a range running past the buffer";
    int local = 0;
    EXPECT_EQ(comm.shared_place(&local, sizeof local).buffer, -1) << "ordinary memory";
    a[5] = 7;
    comm.release_shared_buffer(a);
    EXPECT_EQ(comm.shared_place(a, 1).buffer, -1) << "a buffer given back is not in use";
    unsigned char* b = comm.shared_buffer(500);
    EXPECT_EQ(b, a) << "the buffer given back, reused";
    EXPECT_EQ(b[5], 0) << "and zeroed";
    unsigned char* c = comm.shared_buffer(1u << 20);
    EXPECT_NE(c, a);
    EXPECT_EQ(comm.shared_place(c, 1u << 20).buffer, 1);
    EXPECT_THROW(comm.release_shared_buffer(c + 1), Error);
  });
}

// Two regions in this process: local rank 0 waits, and "rank 1" is whatever check_peer does.
class ScriptedPeer final : public NodeMemory {
 public:
  explicit ScriptedPeer(bool arrives_before_returning)
      : NodeMemory(0, {0, 1}, {page_[0], page_[1]}, sizeof page_[0]), arrives_(arrives_before_returning) {}
  // The peer has returned when asked; when it arrived first, its flag is raised by then.
  void check_peer(int local) const override {
    if (arrives_) reinterpret_cast<std::atomic<std::uint64_t>*>(region(local))->store(1, std::memory_order_release);
    throw_comm("local rank 0 waits for shared-memory data from rank 1, which has already returned");
  }

 private:
  alignas(4096) unsigned char page_[2][4096] = {};
  bool arrives_;
};

TEST(NodeBarrier, APeerThatArrivedAndThenReturnedIsNotAFailure) {
  // The peer raises its flag and returns between the waiter's load of the flag and its check on
  // the peer: the wait must end normally, not report the peer gone.
  const ScriptedPeer arrived(true);
  NodeBarrier barrier(arrived);
  EXPECT_NO_THROW(barrier.arrive_and_wait());
  // A peer that returned without arriving is an error.
  const ScriptedPeer gone(false);
  NodeBarrier waits(gone);
  EXPECT_THROW(waits.arrive_and_wait(), Error);
}

TEST(NodeBarrier, WhatARankWroteBeforeTheBarrierEveryPeerReadsAfterIt) {
  run_local(4, [](Communicator& comm) {
    NodeMemory* mem = comm.node_memory(4096);
    NodeBarrier barrier(*mem);
    auto value = [&](int l) { return reinterpret_cast<std::uint64_t*>(mem->region(l) + 64); };
    for (std::uint64_t round = 1; round <= 2000; ++round) {
      *value(mem->local_rank()) = round * 10 + static_cast<std::uint64_t>(mem->local_rank());
      barrier.arrive_and_wait();
      for (int l = 0; l < mem->local_size(); ++l) {
        ASSERT_EQ(*value(l), round * 10 + static_cast<std::uint64_t>(l)) << "round " << round << ", rank " << l;
      }
      barrier.arrive_and_wait();  // everyone has read before anyone writes the next round
    }
    EXPECT_EQ(barrier.steps(), 4000u);
  });
}

TEST(NodeBarrier, AFlagOffsetOutsideTheRegionIsRefused) {
  run_local(1, [](Communicator& comm) {
    NodeMemory* mem = comm.node_memory(4096);
    EXPECT_THROW(NodeBarrier(*mem, 4092), Error);
    EXPECT_THROW(NodeBarrier(*mem, 3), Error);
  });
}

TEST(NodeBarrier, WaitingForARankThatFailedIsAnErrorNotAHang) {
  try {
    run_local(2, [](Communicator& comm) {
      NodeMemory* mem = comm.node_memory(4096);
      if (comm.rank() == 1) throw std::runtime_error("bad input on rank 1");
      NodeBarrier(*mem).arrive_and_wait();  // rank 1 never arrives
    });
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()), "bad input on rank 1");
  }
}

TEST(NodeBarrier, WaitingForARankThatReturnedIsAnError) {
  EXPECT_THROW(run_local(2,
                         [](Communicator& comm) {
                           NodeMemory* mem = comm.node_memory(4096);
                           if (comm.rank() == 0) NodeBarrier(*mem).arrive_and_wait();
                         }),
               Error);
}

TEST(RankGroup, TranslatesRanksBothWays) {
  std::vector<int> got(5, -1);
  run_local(5, [&](Communicator& comm) {
    if (comm.rank() % 2 != 0) return;  // the group is ranks 0, 2, 4
    RankGroup even(comm, {0, 2, 4});
    EXPECT_EQ(even.size(), 3);
    EXPECT_EQ(even.rank(), comm.rank() / 2);
    const int r = even.rank(), p = even.size();
    int mine = comm.rank(), theirs = -1;
    even.sendrecv(&mine, sizeof mine, (r + 1) % p, &theirs, sizeof theirs, (r + p - 1) % p, 7);
    got[static_cast<std::size_t>(comm.rank())] = theirs;
  });
  EXPECT_EQ(got, (std::vector<int>{4, -1, 0, -1, 2}));
}

TEST(RankGroup, RefusesBadMembersAndTheLibraryCollectives) {
  run_local(2, [](Communicator& comm) {
    EXPECT_THROW(RankGroup(comm, {0, 0, 1}), Error);
    EXPECT_THROW(RankGroup(comm, {0, 5}), Error);
    EXPECT_THROW(RankGroup(comm, {1 - comm.rank()}), Error);  // this rank is not a member
    RankGroup all(comm, {0, 1});
    float x = 1;
    EXPECT_THROW(all.allreduce(&x, &x, 1, DataType::f32, ReduceOp::sum), Error);
    EXPECT_THROW(all.barrier(), Error);
    EXPECT_EQ(all.node_memory(4096), nullptr);
  });
}

}  // namespace
}  // namespace scalelab::comm
