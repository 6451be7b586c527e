// Model: a sequence of layers with its ParameterSet and every activation and gradient buffer,
// allocated once for the largest batch seen (reserve), so that a training step never allocates.
// make_model builds the named models the labs use:
//   cnn      the course's Keras model: Conv2D 32 3x3 ReLU, Conv2D 64 3x3 ReLU, MaxPooling2D 2,
//            Dropout 0.25, Flatten, Dense 128 ReLU, Dropout 0.5, Dense num_classes
//   mlp      Flatten, Dense 256 ReLU, Dense 128 ReLU, Dense num_classes
//   trivial  Flatten, Dense num_classes (almost no compute: the input pipeline sets the pace)
//   resnet   Conv 16 + BatchNorm + ReLU, residual blocks 16, 32/2, 64/2, global average pool, Dense
// Typical step:  model.zero_grad(); logits = model.forward(x, true);
//                softmax_cross_entropy(logits, labels, dlogits); model.backward(dlogits);
//                optimizer.step(model.parameters(), lr);
#pragma once
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "nn/layer.h"
#include "nn/parameter.h"
#include "nn/tensor.h"

namespace scalelab::nn {

class Conv2D;
class MaxPool2D;

class Model {
 public:
  // input_shape per sample: (C, H, W) for images.
  Model(std::string name, const Shape& input_shape, std::size_t num_classes, std::uint64_t seed);
  Model(const Model&) = delete;
  Model& operator=(const Model&) = delete;

  // Build phase: add layers, then build() declares, allocates and initialises the parameters.
  void add(std::unique_ptr<Layer> layer);
  void build();

  // Runs every layer; returns the logits (batch, num_classes), valid until the next forward.
  // A batch larger than any before reserves (allocates) once; smaller batches reuse the buffers.
  ConstTensorView forward(ConstTensorView input, bool training);
  // Backward through every layer after a training forward on the same input; ACCUMULATES into
  // parameters().grads() (call zero_grad() once per optimizer step). dlogits: (batch, classes).
  // on_final(param), if given, is called after each layer's backward for each of that layer's
  // parameters (declaration indices, in backward order), whose gradient this pass no longer
  // touches: a gradient averager may start on it (train/overlapped_averager.h).
  void backward(ConstTensorView dlogits, const std::function<void(std::size_t param)>& on_final = {});
  void zero_grad() { params_.zero_grad(); }
  // Fusion of a Conv2D with the MaxPool2D right after it (on by default, from build()): forward
  // pools each chunk of images as soon as the convolution has computed it, while it is in cache;
  // backward routes the pool's output gradient into each chunk as the convolution needs it, so the
  // pool's input gradient is never written whole, and when the convolution's activation is ReLU
  // the pool applies its derivative (at each window's maximum, from the pooled output). When the
  // model starts with a Conv2D (ReLU) before such a pair, as the cnn does, the pair also computes
  // the first convolution chunk by chunk, again in backward, and its output is never kept.
  // Results are the same to the last bit either way, but for the first convolution's weight and
  // bias gradients, the same sums in another order when chained (tested); off is for comparison.
  void set_fusion(bool on);
  // The runs of layers that fusion makes one unit (first and last layer index, inclusive): a
  // convolution with its pool, a ReLU convolution with the convolution that applies its ReLU's
  // derivative, the chained first convolution; overlapping links make one run. Empty without any.
  [[nodiscard]] std::vector<std::pair<std::size_t, std::size_t>> fused_groups() const;
  // Allocates every buffer for batches up to max_batch (forward calls this when needed).
  void reserve(std::size_t max_batch);

  [[nodiscard]] ParameterSet& parameters() { return params_; }
  [[nodiscard]] const ParameterSet& parameters() const { return params_; }
  [[nodiscard]] const std::string& name() const { return name_; }
  [[nodiscard]] const Shape& input_shape() const { return input_shape_; }
  [[nodiscard]] std::size_t num_classes() const { return num_classes_; }
  [[nodiscard]] std::size_t layer_count() const { return layers_.size(); }
  [[nodiscard]] Layer& layer(std::size_t i) { return *layers_[i]; }
  [[nodiscard]] const Layer& layer(std::size_t i) const { return *layers_[i]; }
  // Layer i's Keras-style name ("conv2d_1") and output shape per sample, as the summary prints them.
  [[nodiscard]] const std::string& layer_name(std::size_t i) const { return layer_names_[i]; }
  [[nodiscard]] const Shape& layer_output_shape(std::size_t i) const { return out_shapes_[i]; }

  // FLOPs per image: forward, and backward (parameter and input gradients, except the first
  // layer's input gradient, which is never computed).
  [[nodiscard]] FlopCount flops_per_image() const;
  // Keras model.summary(): one row per layer (name, type, output shape, parameters), totals.
  void print_summary(std::ostream& os) const;
  [[nodiscard]] std::string summary() const;

  // New random streams for Dropout (e.g. stream = rank, so ranks drop different units): layer i
  // gets Rng(layer_seed(seed, i), stream).
  void reseed(std::uint64_t seed, std::uint64_t stream);
  // Every layer's stream moved on by `forwards` training forwards (Layer::skip_random): after
  // reseed(seed, stream), the streams stand where a run with that seed and stream stood after so
  // many training forwards.
  void skip_random(std::uint64_t forwards);
  // The seed of layer i's random stream: the one key that a layer and any other engine's twin
  // of it (the CUDA engine's Dropout) share, so both draw the same masks.
  [[nodiscard]] static std::uint64_t layer_seed(std::uint64_t seed, std::size_t layer) {
    return seed + 1000003ull * (layer + 1);
  }
  // SyncBatchNorm hook for every BatchNorm layer in the model (see batch_norm.h).
  void set_statistics_reducer(const StatisticsReducer& reducer);
  // Whether any layer normalizes with batch statistics (what SyncBatchNorm reduces).
  [[nodiscard]] bool uses_batch_statistics() const;

 private:
  std::string name_;
  Shape input_shape_;
  std::size_t num_classes_;
  std::uint64_t seed_;
  bool built_ = false;
  std::vector<std::unique_ptr<Layer>> layers_;
  std::vector<std::string> layer_names_;
  std::vector<Shape> out_shapes_;  // per sample, one per layer
  ParameterSet params_;
  std::size_t reserved_batch_ = 0;
  std::size_t first_compute_ = 0;  // the first layer that does not merely alias its input
  std::vector<std::pair<std::size_t, std::size_t>> layer_params_;  // per layer, its parameters [first, end)
  // Per layer: a Conv2D and the MaxPool2D right after it, fused (set_fusion), else null.
  std::vector<std::pair<Conv2D*, MaxPool2D*>> fused_;
  // A convolution with a ReLU and the convolution right after it, which applies that ReLU's
  // derivative in its col2im when fusion is on (Conv2D::set_input_gradient_relu_mask).
  std::vector<std::pair<Conv2D*, Conv2D*>> relu_chained_;
  // The first computing layer, when it is a Conv2D with a ReLU followed by a Conv2D fused with its
  // pool: with fusion on, the second computes the first's output chunk by chunk as it needs it,
  // forward and (again) backward, and the first's output and its gradient are never kept whole
  // (Conv2D::forward_pooled_after). kNoChain otherwise.
  static constexpr std::size_t kNoChain = static_cast<std::size_t>(-1);
  std::size_t chain_ = kNoChain;
  [[nodiscard]] bool chained(std::size_t i) const { return fusion_ && chain_ != kNoChain && i == chain_; }
  bool fusion_ = true;
  bool forward_fused_ = true;  // fusion_ at the last forward, which backward must follow
  std::vector<Tensor> acts_;  // output of each non-aliasing layer (none for a convolution fused with its pool)
  Tensor grad_buf_[2];        // ping-pong input gradients during backward
  ConstTensorView last_input_;
  std::vector<ConstTensorView> views_;  // views_[i]: output of layer i in the last forward
};

// Names make_model accepts, in the order the usage message lists them.
[[nodiscard]] const std::vector<std::string>& model_names();
// Builds and initialises a named model; an unknown name is a usage error listing the names.
[[nodiscard]] std::unique_ptr<Model> make_model(const std::string& name, const Shape& input_shape,
                                                std::size_t num_classes, std::uint64_t seed);

}  // namespace scalelab::nn
