// Host or device benchmark buffers (buffer.h).
#include "bench/buffer.h"

#include <cstdlib>
#include <cstring>
#include <new>
#include <utility>

#include "bench/device_memory.h"

namespace scalelab::bench {

using comm::MemorySpace;

Buffer::Buffer(MemorySpace space, std::size_t bytes) : space_(space), bytes_(bytes) {
  if (space_ == MemorySpace::device) {
    data_ = device_alloc(bytes);
    return;
  }
  // 64-byte aligned for vector loads; at least one byte so data() is never null. The memset
  // touches every page now rather than in the first timed iteration.
  const std::size_t rounded = (bytes + 63) / 64 * 64 + 64;
  data_ = std::aligned_alloc(64, rounded);
  if (data_ == nullptr) throw std::bad_alloc();
  std::memset(data_, 0, rounded);
}

Buffer::Buffer(unsigned char* memory, std::size_t bytes) : data_(memory), bytes_(bytes), owned_(false) {}

Buffer::~Buffer() { release(); }

Buffer::Buffer(Buffer&& other) noexcept
    : space_(other.space_), data_(std::exchange(other.data_, nullptr)), bytes_(std::exchange(other.bytes_, 0)),
      owned_(other.owned_) {}

Buffer& Buffer::operator=(Buffer&& other) noexcept {
  if (this != &other) {
    release();
    space_ = other.space_;
    data_ = std::exchange(other.data_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
    owned_ = other.owned_;
  }
  return *this;
}

void Buffer::release() noexcept {
  if (data_ == nullptr) return;
  if (!owned_) {
    data_ = nullptr;
    return;
  }
  if (space_ == MemorySpace::device) {
    device_free(data_);
  } else {
    std::free(data_);
  }
  data_ = nullptr;
}

void Buffer::upload(const void* host, std::size_t bytes, std::size_t offset) {
  if (bytes == 0) return;
  if (space_ == MemorySpace::device) {
    device_copy(at(offset), host, bytes, CopyKind::host_to_device);
  } else {
    std::memcpy(at(offset), host, bytes);
  }
}

void Buffer::download(void* host, std::size_t bytes, std::size_t offset) const {
  if (bytes == 0) return;
  const void* src = static_cast<const char*>(data_) + offset;
  if (space_ == MemorySpace::device) {
    device_copy(host, src, bytes, CopyKind::device_to_host);
  } else {
    std::memcpy(host, src, bytes);
  }
}

void Buffer::copy_from(const Buffer& other, std::size_t bytes, std::size_t offset) {
  if (bytes == 0) return;
  if (space_ == MemorySpace::device) {
    device_copy(at(offset), other.data_, bytes, CopyKind::device_to_device);
  } else {
    std::memcpy(at(offset), other.data_, bytes);
  }
}

}  // namespace scalelab::bench
