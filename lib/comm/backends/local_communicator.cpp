// The local backend (comm/local.h): ranks are threads sharing one LocalWorld.
//
// Point-to-point is a rendezvous: the sender posts {pointer, bytes, tag} in the receiver's inbox
// and waits until the receiver has copied it. Library collectives publish each rank's buffer
// pointer in a shared table between two barriers and let every rank read its peers' buffers
// directly; reductions go through the shared kernels in rank order, so every rank gets the same
// bits. Any failure is recorded in the world and wakes every waiter, which then throws.
#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <exception>
#include <memory>
#include <new>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "comm/local.h"
#include "comm/reduce.h"
#include "core/error.h"

namespace scalelab::comm {
namespace {

struct Post {
  int src = 0, tag = 0;
  const void* data = nullptr;
  std::size_t bytes = 0;
  bool consumed = false;
};

struct LocalWorld {
  explicit LocalWorld(int n)
      : nranks(n), inbox(static_cast<std::size_t>(n)), finished(static_cast<std::size_t>(n), false),
        slots(static_cast<std::size_t>(n), nullptr) {}

  const int nranks;
  std::mutex mutex;
  std::condition_variable cv;
  std::vector<std::deque<Post*>> inbox;  // per receiving rank, in posting order
  std::vector<bool> finished;            // body returned or threw
  std::string failure;                   // first failure, "" while none
  std::exception_ptr first_error;
  int arrived = 0;
  unsigned long long generation = 0;     // barrier generation
  std::vector<const void*> slots;        // pointers published for library collectives
  // Node memory (node_memory()): blocks rank 0 allocates, freed with the world, after every
  // rank's thread has joined.
  std::vector<std::unique_ptr<unsigned char, void (*)(unsigned char*)>> shared_blocks;

  // Throws when the job has failed, or when `peer` (>= 0) finished without serving us.
  void check_alive(int me, int peer, const char* waiting_for) const {
    if (!failure.empty()) throw_comm("local rank " + std::to_string(me) + ": " + failure);
    if (peer >= 0 && finished[static_cast<std::size_t>(peer)]) {
      throw_comm("local rank " + std::to_string(me) + " waits for " + waiting_for + " rank " +
                 std::to_string(peer) + ", which has already returned: the ranks ran different "
                 "sequences of communicator calls");
    }
  }
  void fail(int rank, const std::string& message, std::exception_ptr error) {
    std::lock_guard lock(mutex);
    if (failure.empty()) {
      failure = "rank " + std::to_string(rank) + " failed: " + message;
      first_error = std::move(error);
    }
    cv.notify_all();
  }
};

// Node memory of the local backend: every rank is on the one "node", regions are plain memory of
// this process. A waiter learns from the world when the job failed or its peer has returned.
class LocalNodeMemory final : public NodeMemory {
 public:
  LocalNodeMemory(LocalWorld& w, int rank, std::vector<unsigned char*> regions, std::size_t bytes)
      : NodeMemory(rank, all_ranks(w.nranks), std::move(regions), bytes), w_(w) {}
  void check_peer(int local) const override {
    std::lock_guard lock(w_.mutex);
    w_.check_alive(local_rank(), local, "shared-memory data from");
  }

 private:
  static std::vector<int> all_ranks(int n) {
    std::vector<int> r(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) r[static_cast<std::size_t>(i)] = i;
    return r;
  }
  LocalWorld& w_;
};

class LocalCommunicator final : public Communicator {
 public:
  LocalCommunicator(LocalWorld& world, int rank) : w_(world), rank_(rank) {}

  [[nodiscard]] int rank() const override { return rank_; }
  [[nodiscard]] int size() const override { return w_.nranks; }
  [[nodiscard]] int local_rank() const override { return rank_; }
  [[nodiscard]] int local_size() const override { return w_.nranks; }
  [[nodiscard]] std::string backend() const override { return "local"; }
  [[nodiscard]] MemorySpace memory_space() const override { return MemorySpace::host; }

  void send(const void* buf, std::size_t bytes, int dst, int tag) override {
    check_peer(dst, "send");
    Post post{rank_, tag, buf, bytes, false};
    std::unique_lock lock(w_.mutex);
    w_.inbox[static_cast<std::size_t>(dst)].push_back(&post);
    w_.cv.notify_all();
    wait_consumed(lock, post, dst);
  }

  void recv(void* buf, std::size_t bytes, int src, int tag) override {
    check_peer(src, "recv");
    std::unique_lock lock(w_.mutex);
    receive(lock, buf, bytes, src, tag);
  }

  void sendrecv(const void* sendbuf, std::size_t send_bytes, int dst, void* recvbuf, std::size_t recv_bytes,
                int src, int tag) override {
    check_peer(dst, "sendrecv");
    check_peer(src, "sendrecv");
    Post post{rank_, tag, sendbuf, send_bytes, false};
    std::unique_lock lock(w_.mutex);
    w_.inbox[static_cast<std::size_t>(dst)].push_back(&post);
    w_.cv.notify_all();
    try {
      receive(lock, recvbuf, recv_bytes, src, tag);
    } catch (...) {
      if (!lock.owns_lock()) lock.lock();
      withdraw(lock, post, dst);
      throw;
    }
    wait_consumed(lock, post, dst);
  }

  void allreduce(const void* sendbuf, void* recvbuf, std::size_t count, DataType type, ReduceOp op) override {
    const std::size_t bytes = count * size_of(type);
    publish(sendbuf);
    scratch_.resize(bytes);
    if (bytes > 0) {
      std::memcpy(scratch_.data(), w_.slots[0], bytes);
      for (int r = 1; r < w_.nranks; ++r) reduce_into(scratch_.data(), slot(r), count, type, op);
    }
    barrier();
    if (bytes > 0) std::memcpy(recvbuf, scratch_.data(), bytes);
    finish_reduction(recvbuf, count, type, op, w_.nranks);
  }

  void broadcast(void* buf, std::size_t count, DataType type, int root) override {
    check_peer(root, "broadcast");
    publish(buf);
    if (rank_ != root && count > 0) std::memcpy(buf, slot(root), count * size_of(type));
    barrier();
  }

  void allgather(const void* sendbuf, void* recvbuf, std::size_t count, DataType type) override {
    const std::size_t bytes = count * size_of(type);
    publish(sendbuf);
    auto* out = static_cast<unsigned char*>(recvbuf);
    for (int r = 0; r < w_.nranks; ++r) {
      unsigned char* dst = out + static_cast<std::size_t>(r) * bytes;
      if (bytes > 0 && dst != slot(r)) std::memcpy(dst, slot(r), bytes);
    }
    barrier();
  }

  void reduce_scatter(const void* sendbuf, void* recvbuf, std::size_t count, DataType type, ReduceOp op) override {
    const std::size_t bytes = count * size_of(type);
    const std::size_t offset = static_cast<std::size_t>(rank_) * bytes;
    publish(sendbuf);
    scratch_.resize(bytes);
    if (bytes > 0) {
      std::memcpy(scratch_.data(), slot(0) + offset, bytes);
      for (int r = 1; r < w_.nranks; ++r) reduce_into(scratch_.data(), slot(r) + offset, count, type, op);
    }
    barrier();
    if (bytes > 0) std::memcpy(recvbuf, scratch_.data(), bytes);
    finish_reduction(recvbuf, count, type, op, w_.nranks);
  }

  void barrier() override {
    std::unique_lock lock(w_.mutex);
    w_.check_alive(rank_, -1, "");
    const auto gen = w_.generation;
    if (++w_.arrived == w_.nranks) {
      w_.arrived = 0;
      ++w_.generation;
      w_.cv.notify_all();
      return;
    }
    w_.cv.wait(lock, [&] { return w_.generation != gen || !w_.failure.empty() || any_finished(); });
    if (w_.generation != gen) return;
    w_.check_alive(rank_, -1, "");
    throw_comm("local rank " + std::to_string(rank_) + " waits in a barrier that a rank which has "
               "already returned will never reach: the ranks ran different sequences of calls");
  }

  NodeMemory* node_memory(std::size_t bytes_per_rank) override {
    const std::size_t bytes = node_region_bytes(bytes_per_rank);
    unsigned char* block = nullptr;
    if (rank_ == 0) {
      block = static_cast<unsigned char*>(::operator new[](bytes * static_cast<std::size_t>(w_.nranks),
                                                           std::align_val_t{kNodePageBytes}));
      std::memset(block, 0, bytes * static_cast<std::size_t>(w_.nranks));
      std::lock_guard lock(w_.mutex);
      w_.shared_blocks.emplace_back(
          block, [](unsigned char* b) { ::operator delete[](b, std::align_val_t{kNodePageBytes}); });
    }
    publish(block);  // rank 0's block, zeroed, reaches every rank
    block = const_cast<unsigned char*>(slot(0));
    std::vector<unsigned char*> regions(static_cast<std::size_t>(w_.nranks));
    for (int r = 0; r < w_.nranks; ++r) regions[static_cast<std::size_t>(r)] = block + static_cast<std::size_t>(r) * bytes;
    barrier();  // every rank has read the pointer before the slots are reused
    memories_.push_back(std::make_unique<LocalNodeMemory>(w_, rank_, std::move(regions), bytes));
    return memories_.back().get();
  }

  [[noreturn]] void abort(const std::string& message, int exit_code) override {
    w_.fail(rank_, message + " (abort, exit code " + std::to_string(exit_code) + ")", nullptr);
    throw_comm("local rank " + std::to_string(rank_) + " aborted: " + message);
  }

 private:
  void check_peer(int peer, const char* what) const {
    if (peer < 0 || peer >= w_.nranks) {
      throw_comm(std::string("local ") + what + ": rank " + std::to_string(peer) + " does not exist (size " +
                 std::to_string(w_.nranks) + ")");
    }
  }
  [[nodiscard]] const unsigned char* slot(int r) const {
    return static_cast<const unsigned char*>(w_.slots[static_cast<std::size_t>(r)]);
  }
  [[nodiscard]] bool any_finished() const {
    for (const bool f : w_.finished) {
      if (f) return true;
    }
    return false;
  }
  void publish(const void* p) {
    barrier();  // everyone has left the previous collective's reads
    {
      std::lock_guard lock(w_.mutex);
      w_.slots[static_cast<std::size_t>(rank_)] = p;
    }
    barrier();  // every pointer is published
  }

  // Waits (lock held) for the first post from src with tag, copies it outside the lock.
  void receive(std::unique_lock<std::mutex>& lock, void* buf, std::size_t bytes, int src, int tag) {
    auto& box = w_.inbox[static_cast<std::size_t>(rank_)];
    Post* post = nullptr;
    for (;;) {
      for (auto it = box.begin(); it != box.end(); ++it) {
        if ((*it)->src == src && (*it)->tag == tag) {
          post = *it;
          box.erase(it);
          break;
        }
      }
      if (post) break;
      w_.check_alive(rank_, src, "a message from");
      w_.cv.wait(lock);
    }
    if (post->bytes != bytes) {
      post->consumed = true;  // release the sender; the failure below stops everyone
      w_.cv.notify_all();
      const std::string m = "local rank " + std::to_string(rank_) + " expected " + std::to_string(bytes) +
                            " bytes from rank " + std::to_string(src) + " (tag " + std::to_string(tag) +
                            ") but it sent " + std::to_string(post->bytes);
      lock.unlock();
      throw_comm(m);
    }
    lock.unlock();
    if (bytes > 0) std::memcpy(buf, post->data, bytes);
    lock.lock();
    post->consumed = true;
    w_.cv.notify_all();
  }

  void wait_consumed(std::unique_lock<std::mutex>& lock, Post& post, int dst) {
    while (!post.consumed) {
      if (!w_.failure.empty() || w_.finished[static_cast<std::size_t>(dst)]) {
        if (withdraw(lock, post, dst)) w_.check_alive(rank_, dst, "the receive of its message by");
        return;  // it was delivered after all
      }
      w_.cv.wait(lock);
    }
  }

  // Takes an undelivered post back out of the inbox (true), or, when the receiver has already
  // taken it and may be copying from it, waits for that copy to end (false): either way the
  // sender's buffer is no longer referenced when this returns.
  bool withdraw(std::unique_lock<std::mutex>& lock, Post& post, int dst) {
    auto& box = w_.inbox[static_cast<std::size_t>(dst)];
    for (auto it = box.begin(); it != box.end(); ++it) {
      if (*it == &post) {
        box.erase(it);
        return true;
      }
    }
    w_.cv.wait(lock, [&] { return post.consumed; });
    return false;
  }

  LocalWorld& w_;
  const int rank_;
  std::vector<unsigned char> scratch_;  // library reductions; grows once, reused
  std::vector<std::unique_ptr<LocalNodeMemory>> memories_;
};

}  // namespace

void run_local(int nranks, const std::function<void(Communicator&)>& body) {
  if (nranks < 1) throw_usage("run_local: the rank count must be at least 1, got " + std::to_string(nranks));
  LocalWorld world(nranks);
  std::vector<std::thread> threads;
  threads.reserve(static_cast<std::size_t>(nranks));
  for (int r = 0; r < nranks; ++r) {
    threads.emplace_back([&world, &body, r] {
      LocalCommunicator comm(world, r);
      try {
        body(comm);
      } catch (const std::exception& e) {
        world.fail(r, e.what(), std::current_exception());
      } catch (...) {
        world.fail(r, "unknown exception", std::current_exception());
      }
      std::lock_guard lock(world.mutex);
      world.finished[static_cast<std::size_t>(r)] = true;
      world.cv.notify_all();
    });
  }
  for (auto& t : threads) t.join();
  if (world.first_error) std::rethrow_exception(world.first_error);
  if (!world.failure.empty()) throw_comm(world.failure);
}

}  // namespace scalelab::comm
