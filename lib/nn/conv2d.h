// Conv2D: a 2-D convolution over NCHW batches (square kernel, stride, zero padding), with an
// optional bias and a fused activation (Keras' Conv2D(filters, k, activation='relu')).
// Weights are (filters, in_channels, k, k) as in PyTorch. Images go through in chunks of a few:
// im2col of the chunk (K x n*Ho*Wo, K = Cin*k*k) multiplied by the (filters x K) weights, then an
// epilogue that adds the bias, applies the activation and reorders to NCHW in one pass.
// Backward per chunk: im2col again, dW^T += cols dY^T, dX = col2im(W^T dY). Columns of at most
// 16 rows (a first layer on one-channel images) skip the BLAS for the forward product and the
// weight gradient: nn/narrow_conv.h.
// Why chunks rather than the whole batch in one product: a chunk's columns (256 KiB) stay in the
// cache between im2col, the product's packing and col2im; the whole batch's (85 MB for the cnn's
// second layer) would go to memory and back five times per step, and memory bandwidth, not
// arithmetic, would set the pace. Recomputing im2col in backward costs less than that traffic.
#pragma once
#include <vector>

#include "nn/activation.h"
#include "nn/im2col.h"
#include "nn/init.h"
#include "nn/layer.h"

namespace scalelab::nn {

class MaxPool2D;

struct Conv2DOptions {
  std::size_t filters = 0;
  std::size_t kernel = 3;
  std::size_t stride = 1;
  std::size_t pad = 0;  // 0 = Keras' padding='valid'; (k-1)/2 with stride 1 = 'same'
  Activation activation = Activation::none;
  bool bias = true;     // off when a BatchNorm follows
  Init init = Init::he_uniform;
};

class Conv2D final : public Layer {
 public:
  explicit Conv2D(const Conv2DOptions& o);
  [[nodiscard]] std::string type() const override { return "Conv2D"; }
  [[nodiscard]] Shape output_shape(const Shape& in) const override;
  void declare(ParameterSet& params, const std::string& name, const Shape& in) override;
  void initialize(ParameterSet& params, Rng& rng) override;
  void reserve(const Shape& in_shape, std::size_t max_batch) override;
  void forward(ConstTensorView in, TensorView out, bool training) override;
  // forward(), and the max-pool after this layer on each chunk of images as soon as the chunk is
  // computed, while it is still in cache (nn::Model fuses them so): `pooled` is the pool's output.
  // This layer's own output lives only in a chunk-sized buffer: backward_pooled does not need it,
  // as the pool applies the ReLU's derivative (set_output_gradient_masked; an error otherwise).
  void forward_pooled(ConstTensorView in, MaxPool2D& pool, TensorView pooled);
  void backward(ConstTensorView in, ConstTensorView out, ConstTensorView dout, TensorView din) override;
  // backward() with the max-pool after this layer (the twin of forward_pooled): each chunk's
  // output gradient comes from the pool's (`dpooled`, against its output `pooled`) plane by plane
  // straight into the product's layout, so the pool's input gradient is never written whole.
  void backward_pooled(ConstTensorView in, const MaxPool2D& pool, ConstTensorView pooled, ConstTensorView dpooled,
                       TensorView din);
  // forward_pooled() on the output of `first`, the convolution before this one, computed from
  // `x` chunk by chunk as this layer takes it, so that first's output never leaves the cache and
  // is never kept whole (nn::Model chains them so when `first` is its first computing layer).
  // `first` must have a ReLU whose derivative this layer applies (set_input_gradient_relu_mask).
  void forward_pooled_after(Conv2D& first, ConstTensorView x, MaxPool2D& pool, TensorView pooled);
  // backward_pooled() after forward_pooled_after(): per chunk, first's output computed again (the
  // cnn's first layer costs a fraction of what keeping its 11 MB output in memory does), this
  // layer's gradients, first's output gradient into a chunk buffer and from it first's parameter
  // gradients. No gradient for `x`.
  void backward_pooled_after(Conv2D& first, ConstTensorView x, const MaxPool2D& pool, ConstTensorView pooled,
                             ConstTensorView dpooled);
  // Workspaces of both layers for forward_pooled_after, and the chunk buffers between them
  // (forward_pooled_after calls it too; Model::reserve does it before the first step).
  void reserve_chain(Conv2D& first, const Shape& x_shape, std::size_t max_batch);
  [[nodiscard]] FlopCount flops(const Shape& in) const override;
  [[nodiscard]] std::size_t parameter_count() const override;
  [[nodiscard]] std::vector<std::size_t> parameter_ids() const override {
    return o_.bias ? std::vector<std::size_t>{w_, b_} : std::vector<std::size_t>{w_};
  }
  [[nodiscard]] const Conv2DOptions& options() const { return o_; }  // for other engines (gpu/)
  // The gradient reaching this layer already carries its ReLU's derivative (the MaxPool2D after it
  // applies it: MaxPool2D::set_applies_relu_mask, set together by nn::Model::build): backward
  // skips reading its output for the mask.
  void set_output_gradient_masked(bool on) { dout_masked_ = on; }
  // The layer before is a convolution with a ReLU whose output is this layer's input: backward
  // applies that ReLU's derivative to the input gradient as col2im writes it, row by row in
  // registers, and the layer before skips its own pass (set_output_gradient_masked, set together
  // by nn::Model::set_fusion). The gradients are the same to the last bit.
  void set_input_gradient_relu_mask(bool on) { din_relu_mask_ = on; }

 private:
  [[nodiscard]] ConvGeometry geometry(const Shape& in) const;
  Conv2DOptions o_;
  bool dout_masked_ = false;
  bool din_relu_mask_ = false;
  ParameterSet* params_ = nullptr;
  std::size_t w_ = 0, b_ = 0;
  std::size_t in_channels_ = 0;
  [[nodiscard]] std::size_t chunk_images(const ConvGeometry& g) const;
  // Images a workspace holds (at least one), after ensure_workspaces.
  [[nodiscard]] std::size_t workspace_images(const ConvGeometry& g) const;
  // Allocates the per-thread workspaces (once; again only if the thread count grows).
  void ensure_workspaces(const Shape& in_shape, std::size_t max_batch);
  // n images from `in` (their first) into `images` (NCHW, those n images only).
  void forward_chunk(const ConvGeometry& g, const float* in, float* images, std::size_t n, std::size_t worker);
  // dz_plane(image, filter, dz) writes dZ of one plane, the activation's derivative applied. A
  // template, not a std::function: a capture that large would be allocated on every call.
  template <class PlaneGradient>
  void backward_chunks(ConstTensorView in, TensorView din, const PlaneGradient& dz_plane);
  // Images [b0, b0 + n): `in` and `din` point at their first (din null: no input gradient);
  // dz_plane is asked for images b0 to b0 + n - 1. Parameter gradients go to the worker's
  // workspace between start_gradients and finish_gradients (the workers that ran).
  template <class PlaneGradient>
  void backward_chunk(const ConvGeometry& g, const float* in, const PlaneGradient& dz_plane, float* din,
                      std::size_t b0, std::size_t n, std::size_t worker);
  // The first layer's output for images [b0, b0 + n) of x into `out` (forward_pooled_after).
  void first_forward(Conv2D& first, ConstTensorView x, float* out, std::size_t b0, std::size_t n, std::size_t worker);
  void start_gradients(std::size_t worker);
  void finish_gradients(const ConvGeometry& g, std::size_t workers);
  // One per compute thread: chunks of images are spread over threads (compute.h).
  struct Workspace {
    Tensor cols;     // im2col of one chunk; in backward also the chunk's input-gradient columns
    Tensor scratch;  // (filters x chunk*Ho*Wo): the product before the epilogue; dY in that layout
    Tensor pool_in;  // the chunk's output images when the pool after this layer takes them (forward_pooled)
    Tensor first_out, first_grad;  // the chunk's input and its gradient, after a chained first layer
    Tensor dwt;      // this thread's weight gradient, transposed (K x filters), added in after the pass
    Tensor db;       // this thread's bias gradient (thread 0 adds to the parameters')
  };
  std::vector<Workspace> ws_;
  std::size_t ws_cols_ = 0;
};

}  // namespace scalelab::nn
