// DeviceBuffer<T>: an array in GPU memory owned by one object (cudaMalloc in the constructor or
// in resize, cudaFree in the destructor), so the CUDA engine allocates every buffer once, before
// the first step, and reuses it (gpu/device_model.h). PinnedBuffer<T>: the same in page-locked
// host memory, for small asynchronous device-to-host copies (the loss tally).
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <string>
#include <utility>

#include "gpu/cuda_check.h"

namespace scalelab::gpu {

template <class T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(std::size_t n, const std::string& what) { resize(n, what); }
  ~DeviceBuffer() { release(); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& o) noexcept : p_(std::exchange(o.p_, nullptr)), n_(std::exchange(o.n_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
      release();
      p_ = std::exchange(o.p_, nullptr);
      n_ = std::exchange(o.n_, 0);
    }
    return *this;
  }
  // Makes room for at least n elements (contents not kept); allocates only when growing.
  void resize(std::size_t n, const std::string& what) {
    if (n <= n_ && p_ != nullptr) return;
    release();
    void* p = nullptr;
    cuda_check(cudaMalloc(&p, (n == 0 ? 1 : n) * sizeof(T)),
               "cudaMalloc of " + std::to_string(n * sizeof(T)) + " bytes for " + what);
    p_ = static_cast<T*>(p);
    n_ = n;
  }
  [[nodiscard]] T* data() { return p_; }
  [[nodiscard]] const T* data() const { return p_; }
  [[nodiscard]] std::size_t size() const { return n_; }

 private:
  void release() noexcept {
    if (p_ != nullptr) (void)cudaFree(p_);  // nothing to do about a failure while freeing
    p_ = nullptr;
    n_ = 0;
  }
  T* p_ = nullptr;
  std::size_t n_ = 0;
};

template <class T>
class PinnedBuffer {
 public:
  PinnedBuffer(std::size_t n, const std::string& what) : n_(n) {
    void* p = nullptr;
    cuda_check(cudaMallocHost(&p, (n == 0 ? 1 : n) * sizeof(T)), "cudaMallocHost for " + what);
    p_ = static_cast<T*>(p);
  }
  ~PinnedBuffer() { (void)cudaFreeHost(p_); }
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  [[nodiscard]] T* data() { return p_; }
  [[nodiscard]] std::size_t size() const { return n_; }

 private:
  T* p_ = nullptr;
  std::size_t n_;
};

}  // namespace scalelab::gpu
