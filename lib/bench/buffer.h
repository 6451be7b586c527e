// A benchmark buffer in the communicator's memory space (host memory for mpi/local, device
// memory for nccl), allocated once per size and touched at allocation so no page fault lands in
// a timed iteration. Inputs are built and results checked in host memory and copied across.
//
//   Buffer send(comm.memory_space(), bytes);
//   send.upload(host_input.data(), bytes);   // memcpy, or cudaMemcpy for device memory
#pragma once
#include <cstddef>

#include "comm/communicator.h"

namespace scalelab::bench {

class Buffer {
 public:
  Buffer() = default;
  Buffer(comm::MemorySpace space, std::size_t bytes);
  // `bytes` at `memory`, host memory that someone else owns (a shared buffer, bench -R 1): the
  // Buffer never frees it.
  Buffer(unsigned char* memory, std::size_t bytes);
  ~Buffer();
  Buffer(Buffer&& other) noexcept;
  Buffer& operator=(Buffer&& other) noexcept;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  [[nodiscard]] void* data() { return data_; }
  [[nodiscard]] const void* data() const { return data_; }
  [[nodiscard]] std::size_t bytes() const { return bytes_; }

  // Copies in bytes; `offset` is a byte offset into this buffer.
  void upload(const void* host, std::size_t bytes, std::size_t offset = 0);                // host -> this
  void download(void* host, std::size_t bytes, std::size_t offset = 0) const;              // this -> host
  void copy_from(const Buffer& other, std::size_t bytes, std::size_t offset = 0);          // other[0..) -> this
  [[nodiscard]] void* at(std::size_t offset) { return static_cast<char*>(data_) + offset; }

 private:
  void release() noexcept;
  comm::MemorySpace space_ = comm::MemorySpace::host;
  void* data_ = nullptr;
  std::size_t bytes_ = 0;
  bool owned_ = true;
};

}  // namespace scalelab::bench
