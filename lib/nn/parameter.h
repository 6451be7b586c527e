// ParameterSet: every trainable parameter of a model in ONE contiguous float buffer of values and
// ONE of gradients, plus per-parameter metadata (name, shape, offset, kind), and the non-trainable
// state (BatchNorm running statistics) in a third flat buffer.
// Why flat: the distributed optimizer allreduces gradients in place in fused chunks, broadcasts
// all values (and the state) in one call, and checkpoints are three memcpy's. Layers declare their
// parameters before finalize() allocates the buffers, and keep only indices (pointers are stable
// after finalize because the buffers never grow again).
#pragma once
#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "nn/tensor.h"

namespace scalelab::nn {

// What a parameter is, so that LARS/LAMB can exclude biases and normalisation parameters and
// weight decay can be restricted to weights.
enum class ParamKind { weight, bias, norm_scale, norm_shift };
[[nodiscard]] const char* param_kind_name(ParamKind k);

struct ParamInfo {
  std::string name;    // "conv2d_1.weight"
  Shape shape;         // PyTorch's layout: conv (Cout, Cin, Kh, Kw), dense (out, in), bias (out)
  std::size_t offset;  // in floats, into values() and grads()
  std::size_t size;    // in floats
  ParamKind kind;
};

struct StateInfo {
  std::string name;  // "batch_norm_1.running_mean"
  std::size_t offset;
  std::size_t size;
};

class ParameterSet {
 public:
  ParameterSet() = default;
  ParameterSet(const ParameterSet&) = delete;  // layers hold a pointer to their set
  ParameterSet& operator=(const ParameterSet&) = delete;

  // Declaration phase (before finalize): returns the index to use with value()/grad().
  std::size_t add(std::string name, const Shape& shape, ParamKind kind);
  // Non-trainable state (running statistics); returns the index to use with state().
  std::size_t add_state(std::string name, std::size_t size);
  // Allocates the three buffers (zeroed). Calling add() afterwards is an error.
  void finalize();
  [[nodiscard]] bool finalized() const { return finalized_; }

  [[nodiscard]] std::size_t size() const { return total_; }  // trainable floats
  [[nodiscard]] std::size_t count() const { return params_.size(); }
  [[nodiscard]] const std::vector<ParamInfo>& params() const { return params_; }
  [[nodiscard]] const ParamInfo& info(std::size_t i) const { return params_[i]; }

  [[nodiscard]] std::span<float> values() { return {values_.data(), total_}; }
  [[nodiscard]] std::span<const float> values() const { return {values_.data(), total_}; }
  [[nodiscard]] std::span<float> grads() { return {grad_data_, total_}; }
  [[nodiscard]] std::span<const float> grads() const { return {grad_data_, total_}; }
  [[nodiscard]] float* value(std::size_t i) { return values_.data() + params_[i].offset; }
  [[nodiscard]] const float* value(std::size_t i) const { return values_.data() + params_[i].offset; }
  [[nodiscard]] float* grad(std::size_t i) { return grad_data_ + params_[i].offset; }
  [[nodiscard]] const float* grad(std::size_t i) const { return grad_data_ + params_[i].offset; }

  [[nodiscard]] std::span<float> state() { return {state_.data(), state_total_}; }
  [[nodiscard]] std::span<const float> state() const { return {state_.data(), state_total_}; }
  [[nodiscard]] float* state(std::size_t i) { return state_.data() + state_info_[i].offset; }
  [[nodiscard]] const std::vector<StateInfo>& state_info() const { return state_info_; }

  // Moves the gradients to `memory` (at least size() floats, 64-byte aligned; the caller keeps it
  // alive), keeping their values: a shared buffer in node memory (comm/communicator.h), which the
  // shared-memory allreduce reads in place on every rank.
  void place_grads(float* memory);

  // Gradients accumulate across backward passes (backward_passes_per_step); the trainer zeroes
  // them once per optimizer step.
  void zero_grad();
  // A one-line fingerprint of the layout ("12 tensors, 1199882 floats: conv2d.weight(32,1,3,3) ..."),
  // compared across ranks before the initial broadcast.
  [[nodiscard]] std::string layout_signature() const;

 private:
  void require_open(const std::string& what) const;
  std::vector<ParamInfo> params_;
  std::vector<StateInfo> state_info_;
  std::size_t total_ = 0;
  std::size_t state_total_ = 0;
  bool finalized_ = false;
  Tensor values_, grads_, state_;
  float* grad_data_ = nullptr;  // grads_, or the memory place_grads() gave
};

}  // namespace scalelab::nn
