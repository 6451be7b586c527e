// Layer: the interface every nn layer implements, and the order in which Model calls it:
//   declare(params, name, in_shape)  register parameters / running statistics (before
//                          params.finalize()) for this per-sample input shape
//   initialize(params, rng) fill parameters from a seed (He or Glorot, see init.h)
//   reserve(max_batch)     allocate every workspace once, so forward/backward never allocate
//   forward(in, out, training)           out = f(in); caches what backward needs
//   backward(in, out, dout, din)         din = df/din^T dout (skipped when din is empty: the
//                                        first layer), and ACCUMULATES (+=) into the parameter
//                                        gradients so that several backward passes add up.
// Shapes passed to output_shape/flops are per sample (C, H, W) or (F); views carry the batch.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/rng.h"
#include "nn/parameter.h"
#include "nn/tensor.h"

namespace scalelab::nn {

// Multiply-adds counted as 2 FLOPs, per image. backward_input is the part of the backward pass
// that computes the input gradient, which the first layer of a model skips.
struct FlopCount {
  double forward = 0;
  double backward_params = 0;
  double backward_input = 0;
  [[nodiscard]] double backward() const { return backward_params + backward_input; }
};

// Sums over the local batch handed to a synchronised-statistics hook (SyncBatchNorm): the hook
// must replace each of the n floats with its sum over all ranks, in place. See batch_norm.h for
// what the floats are in forward and in backward.
using StatisticsReducer = std::function<void(float* sums, std::size_t n)>;

class Layer {
 public:
  virtual ~Layer() = default;
  // Keras-style class name for the summary: "Conv2D", "Dense", "MaxPooling2D" ...
  [[nodiscard]] virtual std::string type() const = 0;
  // Output shape per sample for an input shape per sample; throws usage if they do not fit.
  [[nodiscard]] virtual Shape output_shape(const Shape& in) const = 0;
  virtual void declare(ParameterSet& /*params*/, const std::string& /*name*/, const Shape& /*in*/) {}
  virtual void initialize(ParameterSet& /*params*/, Rng& /*rng*/) {}
  // in_shape is per sample, as given to output_shape.
  virtual void reserve(const Shape& /*in_shape*/, std::size_t /*max_batch*/) {}
  virtual void forward(ConstTensorView in, TensorView out, bool training) = 0;
  virtual void backward(ConstTensorView in, ConstTensorView out, ConstTensorView dout, TensorView din) = 0;
  [[nodiscard]] virtual FlopCount flops(const Shape& /*in*/) const { return {}; }
  // Layers with randomness (Dropout) take a new seed stream, e.g. per rank; others ignore it.
  virtual void reseed(std::uint64_t /*seed*/, std::uint64_t /*stream*/) {}
  // Moves the stream on as `forwards` training forwards would have (a resumed run continues the
  // masks of the run it continues); layers without randomness ignore it.
  virtual void skip_random(std::uint64_t /*forwards*/) {}
  // Trainable parameter count, for the summary.
  [[nodiscard]] virtual std::size_t parameter_count() const { return 0; }
  // The ParameterSet indices of this layer's own parameters, as declare() registered them
  // (weight first, then bias): their shapes, stated once in declare(), are read back from the
  // ParameterSet by whoever needs them (the CUDA engine's layers). Empty without parameters.
  [[nodiscard]] virtual std::vector<std::size_t> parameter_ids() const { return {}; }
  // True for layers whose output is their input reshaped (Flatten): Model then passes the same
  // memory through, and calls neither forward nor backward.
  [[nodiscard]] virtual bool aliases_input() const { return false; }
  // BatchNorm layers (also inside composite layers) take the SyncBatchNorm hook; others ignore it.
  virtual void set_statistics_reducer(const StatisticsReducer& /*reducer*/) {}
  // Whether the layer normalizes with its batch's statistics (BatchNorm, or a block holding one):
  // what SyncBatchNorm would reduce across ranks.
  [[nodiscard]] virtual bool uses_batch_statistics() const { return false; }
};

}  // namespace scalelab::nn
