// The Communicator's non-virtual helpers and the default control-plane exchange (communicator.h).
#include "comm/communicator.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>

#include "core/error.h"

namespace scalelab::comm {

void Communicator::host_allgather(const void* send, void* recv, std::size_t bytes_per_rank) {
  if (memory_space() != MemorySpace::host) {
    throw_runtime("host_allgather: backend '" + backend() + "' must provide its own host exchange");
  }
  // A ring: at step s forward the block received at step s-1. p-1 steps, any rank count.
  const int p = size(), r = rank();
  auto* out = static_cast<unsigned char*>(recv);
  std::memmove(out + static_cast<std::size_t>(r) * bytes_per_rank, send, bytes_per_rank);
  const int right = (r + 1) % p, left = (r - 1 + p) % p;
  for (int s = 0; s < p - 1; ++s) {
    const int send_block = (r - s + p) % p, recv_block = (r - s - 1 + p) % p;
    sendrecv(out + static_cast<std::size_t>(send_block) * bytes_per_rank, bytes_per_rank, right,
             out + static_cast<std::size_t>(recv_block) * bytes_per_rank, bytes_per_rank, left,
             /*tag=*/0x5ca1);
  }
}

void Communicator::local_copy(void* dst, const void* src, std::size_t bytes) {
  if (memory_space() != MemorySpace::host) {
    throw_runtime("local_copy: backend '" + backend() + "' must provide its own copy");
  }
  if (bytes > 0 && dst != src) std::memmove(dst, src, bytes);
}

unsigned char* Communicator::shared_buffer(std::size_t bytes) {
  // A buffer given back that is large enough: every rank finds the same one (same history).
  for (std::size_t i = 0; i < shared_buffers_.size(); ++i) {
    NodeMemory& mem = *shared_buffers_[i];
    if (shared_free_[i] && mem.region_bytes() >= bytes) {
      shared_free_[i] = false;
      unsigned char* own = mem.region(mem.local_rank());
      std::memset(own, 0, mem.region_bytes());
      return own;
    }
  }
  NodeMemory* mem = node_memory(bytes);
  if (mem == nullptr) return nullptr;
  shared_buffers_.push_back(mem);
  shared_free_.push_back(false);
  return mem->region(mem->local_rank());
}

void Communicator::release_shared_buffer(const unsigned char* buffer) {
  for (std::size_t i = 0; i < shared_buffers_.size(); ++i) {
    const NodeMemory& mem = *shared_buffers_[i];
    if (mem.region(mem.local_rank()) == buffer && !shared_free_[i]) {
      shared_free_[i] = true;
      return;
    }
  }
  throw_runtime("release_shared_buffer: not a shared buffer in use on this communicator");
}

Communicator::SharedPlace Communicator::shared_place(const void* p, std::size_t bytes) const {
  const auto* b = static_cast<const unsigned char*>(p);
  for (std::size_t i = 0; i < shared_buffers_.size(); ++i) {
    if (shared_free_[i]) continue;
    const NodeMemory& mem = *shared_buffers_[i];
    const unsigned char* start = mem.region(mem.local_rank());
    // Compared as integers: pointers into different objects have no order in C++.
    const auto at = reinterpret_cast<std::uintptr_t>(b), lo = reinterpret_cast<std::uintptr_t>(start);
    if (at >= lo && at - lo <= mem.region_bytes() && bytes <= mem.region_bytes() - (at - lo)) {
      return {static_cast<int>(i), at - lo};
    }
  }
  return {};
}

const NodeMemory& Communicator::shared_buffer_memory(int index) const {
  if (index < 0 || static_cast<std::size_t>(index) >= shared_buffers_.size()) {
    throw_runtime("shared_buffer_memory: no shared buffer " + std::to_string(index) + " (" +
                  std::to_string(shared_buffers_.size()) + " made)");
  }
  return *shared_buffers_[static_cast<std::size_t>(index)];
}

std::vector<double> Communicator::gather_values(double value) {
  std::vector<double> all(static_cast<std::size_t>(size()));
  host_allgather(&value, all.data(), sizeof(double));
  return all;
}

double Communicator::max_over_ranks(double value) {
  const auto all = gather_values(value);
  return *std::max_element(all.begin(), all.end());
}

}  // namespace scalelab::comm
