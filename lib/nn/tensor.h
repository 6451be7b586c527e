// Float32 tensors for the nn engine: Shape (up to 4 dimensions, no heap), TensorView and
// ConstTensorView (non-owning, cheap to copy and slice) and Tensor (owning, 64-byte aligned storage
// that is allocated once and reused). Images are NCHW; a batch of feature vectors is (N, F).
// Layers take and return views; Model owns the Tensors behind them, so no step allocates.
#pragma once
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdlib>
#include <initializer_list>
#include <memory>
#include <string>

#include "core/error.h"

namespace scalelab::nn {

class Shape {
 public:
  static constexpr int kMaxRank = 4;
  Shape() = default;
  Shape(std::initializer_list<std::size_t> dims) {
    if (dims.size() > kMaxRank) throw_usage("Shape: at most 4 dimensions are supported");
    for (std::size_t d : dims) dims_[static_cast<std::size_t>(rank_++)] = d;
  }
  [[nodiscard]] int rank() const { return rank_; }
  [[nodiscard]] std::size_t operator[](int i) const { return dims_[static_cast<std::size_t>(i)]; }
  [[nodiscard]] std::size_t numel() const {
    std::size_t n = 1;
    for (int i = 0; i < rank_; ++i) n *= dims_[static_cast<std::size_t>(i)];
    return rank_ == 0 ? 0 : n;
  }
  // (n, dims...): the batched shape of a per-sample shape.
  [[nodiscard]] Shape with_batch(std::size_t n) const {
    Shape s;
    s.rank_ = rank_ + 1;
    s.dims_[0] = n;
    for (int i = 0; i < rank_; ++i) s.dims_[static_cast<std::size_t>(i + 1)] = dims_[static_cast<std::size_t>(i)];
    return s;
  }
  // dims[1:]: the per-sample shape of a batched shape.
  [[nodiscard]] Shape without_batch() const {
    Shape s;
    s.rank_ = rank_ - 1;
    for (int i = 1; i < rank_; ++i) s.dims_[static_cast<std::size_t>(i - 1)] = dims_[static_cast<std::size_t>(i)];
    return s;
  }
  // "(32, 26, 26)", as Keras prints shapes.
  [[nodiscard]] std::string str() const {
    std::string s = "(";
    for (int i = 0; i < rank_; ++i) s += (i ? ", " : "") + std::to_string(dims_[static_cast<std::size_t>(i)]);
    return s + ")";
  }
  friend bool operator==(const Shape& a, const Shape& b) {
    if (a.rank_ != b.rank_) return false;
    for (int i = 0; i < a.rank_; ++i) if (a[i] != b[i]) return false;
    return true;
  }

 private:
  std::array<std::size_t, kMaxRank> dims_{};
  int rank_ = 0;
};

// Non-owning view of contiguous float32 data with a shape; dimension 0 is the batch.
template <class T>
struct BasicTensorView {
  T* data = nullptr;
  Shape shape;
  [[nodiscard]] std::size_t numel() const { return shape.numel(); }
  [[nodiscard]] std::size_t batch() const { return shape[0]; }
  [[nodiscard]] std::size_t sample_numel() const { return batch() ? numel() / batch() : 0; }
  [[nodiscard]] bool empty() const { return data == nullptr; }
  // Samples [first, first + count) as a view (contiguous because the batch is the outer dimension).
  [[nodiscard]] BasicTensorView slice(std::size_t first, std::size_t count) const {
    Shape s = shape.without_batch().with_batch(count);
    return {data + first * sample_numel(), s};
  }
  [[nodiscard]] BasicTensorView reshaped(const Shape& s) const {
    if (s.numel() != numel()) throw_usage("TensorView::reshaped: " + shape.str() + " cannot become " + s.str());
    return {data, s};
  }
  operator BasicTensorView<const float>() const { return {data, shape}; }  // NOLINT: float -> const float
};
using TensorView = BasicTensorView<float>;
using ConstTensorView = BasicTensorView<const float>;

// Owning tensor. Storage is 64-byte aligned (AVX-512 loads) and only grows: resize() to a smaller
// or equal size reuses the buffer, which is how per-step buffers avoid fresh page faults.
class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(const Shape& s) { resize(s); }
  void resize(const Shape& s) {
    std::size_t n = s.numel();
    if (n > capacity_) {
      // Round to whole cache lines; zero once so that every page is touched now, not in a step.
      std::size_t bytes = ((n * sizeof(float) + 63) / 64) * 64;
      data_.reset(static_cast<float*>(std::aligned_alloc(64, bytes)));
      if (!data_) throw_runtime("Tensor: out of memory allocating " + std::to_string(bytes) + " bytes");
      std::fill_n(data_.get(), bytes / sizeof(float), 0.0f);
      capacity_ = bytes / sizeof(float);
    }
    shape_ = s;
  }
  void fill(float v) { std::fill_n(data_.get(), shape_.numel(), v); }
  [[nodiscard]] const Shape& shape() const { return shape_; }
  [[nodiscard]] std::size_t numel() const { return shape_.numel(); }
  [[nodiscard]] float* data() { return data_.get(); }
  [[nodiscard]] const float* data() const { return data_.get(); }
  [[nodiscard]] TensorView view() { return {data_.get(), shape_}; }
  [[nodiscard]] ConstTensorView view() const { return {data_.get(), shape_}; }
  [[nodiscard]] std::size_t capacity() const { return capacity_; }

 private:
  struct Free {
    void operator()(float* p) const { std::free(p); }
  };
  std::unique_ptr<float, Free> data_;
  std::size_t capacity_ = 0;
  Shape shape_;
};

}  // namespace scalelab::nn
