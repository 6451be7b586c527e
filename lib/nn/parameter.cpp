// ParameterSet: declaration, allocation and the layout fingerprint (see parameter.h).
#include "nn/parameter.h"

#include <algorithm>
#include <cstdint>

namespace scalelab::nn {

const char* param_kind_name(ParamKind k) {
  switch (k) {
    case ParamKind::weight: return "weight";
    case ParamKind::bias: return "bias";
    case ParamKind::norm_scale: return "norm_scale";
    case ParamKind::norm_shift: return "norm_shift";
  }
  return "?";
}

void ParameterSet::require_open(const std::string& what) const {
  if (finalized_) throw_runtime("ParameterSet: " + what + " declared after finalize(); declare every parameter first");
}

std::size_t ParameterSet::add(std::string name, const Shape& shape, ParamKind kind) {
  require_open(name);
  // Align each tensor to 16 floats (64 bytes) so that every parameter starts on a cache line.
  std::size_t offset = (total_ + 15) / 16 * 16;
  params_.push_back({std::move(name), shape, offset, shape.numel(), kind});
  total_ = offset + shape.numel();
  return params_.size() - 1;
}

std::size_t ParameterSet::add_state(std::string name, std::size_t size) {
  require_open(name);
  state_info_.push_back({std::move(name), state_total_, size});
  state_total_ += size;
  return state_info_.size() - 1;
}

void ParameterSet::finalize() {
  if (finalized_) return;
  // Tensors never have a zero-size storage problem: allocate at least one float.
  values_.resize(Shape{std::max<std::size_t>(total_, 1)});
  grads_.resize(Shape{std::max<std::size_t>(total_, 1)});
  grad_data_ = grads_.data();
  state_.resize(Shape{std::max<std::size_t>(state_total_, 1)});
  finalized_ = true;
}

void ParameterSet::zero_grad() { std::fill_n(grad_data_, total_, 0.0f); }

void ParameterSet::place_grads(float* memory) {
  if (!finalized_) throw_runtime("ParameterSet: place_grads() before finalize()");
  if (memory == nullptr || reinterpret_cast<std::uintptr_t>(memory) % 64 != 0) {
    throw_runtime("ParameterSet: place_grads() needs memory on a 64-byte boundary");
  }
  std::copy_n(grad_data_, total_, memory);
  grad_data_ = memory;
  grads_ = Tensor();  // the old storage is no longer used
}

std::string ParameterSet::layout_signature() const {
  std::string s = std::to_string(params_.size()) + " tensors, " + std::to_string(total_) + " floats:";
  for (const auto& p : params_) s += " " + p.name + p.shape.str();
  s += "; state " + std::to_string(state_total_) + " floats";
  return s;
}

}  // namespace scalelab::nn
