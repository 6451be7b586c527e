// Conv2D forward and backward over whole batches (see conv2d.h).
#include "nn/conv2d.h"

#include <algorithm>

#include "nn/blas.h"
#include "nn/compute.h"
#include "nn/maxpool2d.h"
#include "nn/narrow_conv.h"
#include "nn/reduce.h"

namespace scalelab::nn {
namespace {
// Columns per chunk, in bytes (at least one image per chunk).
constexpr std::size_t kChunkBytes = std::size_t{256} << 10;

// dz_plane (Conv2D::backward_chunk) of a convolution whose max-pool applies its ReLU: each plane's
// gradient from the pool's output gradient.
auto from_pool(const MaxPool2D& pool, const ConvGeometry& g, std::size_t filters, ConstTensorView pooled,
               ConstTensorView dpooled) {
  return [&pool, g, filters, pooled, dpooled](std::size_t image, std::size_t filter, float* dz) {
    pool.backward_plane(g.out_h(), g.out_w(), pooled, dpooled, image * filters + filter, dz);
  };
}
}  // namespace

Conv2D::Conv2D(const Conv2DOptions& o) : o_(o) {
  if (o.filters == 0 || o.kernel == 0 || o.stride == 0)
    throw_usage("Conv2D: filters, kernel size and stride must be at least 1");
}

ConvGeometry Conv2D::geometry(const Shape& in) const {
  return {in[0], in[1], in[2], o_.kernel, o_.kernel, o_.stride, o_.pad};
}

Shape Conv2D::output_shape(const Shape& in) const {
  if (in.rank() != 3) throw_usage("Conv2D needs (channels, height, width) inputs, got " + in.str());
  if (in[1] + 2 * o_.pad < o_.kernel || in[2] + 2 * o_.pad < o_.kernel)
    throw_usage("Conv2D: a " + std::to_string(o_.kernel) + "x" + std::to_string(o_.kernel) +
                " kernel does not fit the input " + in.str());
  ConvGeometry g = geometry(in);
  return {o_.filters, g.out_h(), g.out_w()};
}

void Conv2D::declare(ParameterSet& params, const std::string& name, const Shape& in) {
  params_ = &params;
  in_channels_ = in[0];
  w_ = params.add(name + ".weight", Shape{o_.filters, in_channels_, o_.kernel, o_.kernel}, ParamKind::weight);
  if (o_.bias) b_ = params.add(name + ".bias", Shape{o_.filters}, ParamKind::bias);
}

void Conv2D::initialize(ParameterSet& params, Rng& rng) {
  std::size_t fan_in = in_channels_ * o_.kernel * o_.kernel, fan_out = o_.filters * o_.kernel * o_.kernel;
  nn::initialize(params.value(w_), params.info(w_).size, o_.init, fan_in, fan_out, rng);
  if (o_.bias) std::fill_n(params.value(b_), o_.filters, 0.0f);
}

std::size_t Conv2D::chunk_images(const ConvGeometry& g) const {
  // Measured on the cnn (EPYC, 1 MiB L2): 256 KiB chunks beat 2 MiB by ~10% and 4 MiB by ~20%;
  // the columns are written by im2col and read back by the product's packing while still in L2.
  const std::size_t per_image = g.rows() * g.out_h() * g.out_w() * sizeof(float);
  return std::max<std::size_t>(1, kChunkBytes / std::max<std::size_t>(per_image, 1));
}

std::size_t Conv2D::workspace_images(const ConvGeometry& g) const {
  return std::max<std::size_t>(1, ws_cols_ / (g.out_h() * g.out_w()));
}

void Conv2D::reserve(const Shape& in_shape, std::size_t max_batch) { ensure_workspaces(in_shape, max_batch); }

void Conv2D::ensure_workspaces(const Shape& in_shape, std::size_t max_batch) {
  const ConvGeometry g = geometry(in_shape);
  const std::size_t ncols = std::min(max_batch, chunk_images(g)) * g.out_h() * g.out_w();
  const auto threads = static_cast<std::size_t>(compute_threads());
  if (ws_.size() >= threads && ws_cols_ >= ncols) return;
  ws_.resize(std::max(ws_.size(), threads));
  for (std::size_t w = 0; w < ws_.size(); ++w) {
    ws_[w].cols.resize(Shape{g.rows(), ncols});
    ws_[w].scratch.resize(Shape{o_.filters, ncols});
    ws_[w].dwt.resize(Shape{g.rows(), o_.filters});
    if (w > 0) ws_[w].db.resize(Shape{o_.filters});
  }
  ws_cols_ = ncols;
}

std::size_t Conv2D::parameter_count() const {
  return o_.filters * in_channels_ * o_.kernel * o_.kernel + (o_.bias ? o_.filters : 0);
}

FlopCount Conv2D::flops(const Shape& in) const {
  ConvGeometry g = geometry(in);
  double macs = double(o_.filters) * double(g.rows()) * double(g.out_h() * g.out_w());
  return {2 * macs, 2 * macs, 2 * macs};
}

void Conv2D::forward(ConstTensorView in, TensorView out, bool /*training*/) {
  const ConvGeometry g = geometry(in.shape.without_batch());
  const std::size_t batch = in.batch(), chunk = chunk_images(g), chunks = (batch + chunk - 1) / chunk;
  ensure_workspaces(in.shape.without_batch(), batch);
  const std::size_t in_image = in.sample_numel(), out_image = out.shape.without_batch().numel();
  parallel_for(chunks, [&](std::size_t c0, std::size_t c1, std::size_t w) {
    for (std::size_t c = c0; c < c1; ++c)
      forward_chunk(g, in.data + c * chunk * in_image, out.data + c * chunk * out_image,
                    std::min(chunk, batch - c * chunk), w);
  });
}

void Conv2D::forward_pooled(ConstTensorView in, MaxPool2D& pool, TensorView pooled) {
  if (o_.activation != Activation::none && !dout_masked_)
    throw_runtime("Conv2D::forward_pooled: backward needs this layer's output for its activation");
  const ConvGeometry g = geometry(in.shape.without_batch());
  const std::size_t batch = in.batch(), chunk = chunk_images(g), chunks = (batch + chunk - 1) / chunk;
  ensure_workspaces(in.shape.without_batch(), batch);
  for (auto& ws : ws_) ws.pool_in.resize(Shape{o_.filters, ws_cols_});  // allocates once
  parallel_for(chunks, [&](std::size_t c0, std::size_t c1, std::size_t w) {
    float* images = ws_[w].pool_in.data();
    for (std::size_t c = c0; c < c1; ++c) {
      const std::size_t b0 = c * chunk, n = std::min(chunk, batch - b0);
      forward_chunk(g, in.data + b0 * in.sample_numel(), images, n, w);
      pool.forward_images(images, g.out_h(), g.out_w(), pooled, b0, n);  // the chunk's images, still in cache
    }
  });
}

void Conv2D::forward_chunk(const ConvGeometry& g, const float* in, float* images, std::size_t n, std::size_t worker) {
  const std::size_t plane = g.out_h() * g.out_w(), k = g.rows(), ncols = n * plane;
  const std::size_t out_image = o_.filters * plane;
  const float* bias = o_.bias ? params_->value(b_) : nullptr;
  const bool relu = o_.activation == Activation::relu;
  Workspace& ws = ws_[worker];
  im2col(g, n, in, ws.cols.data());
  if (narrow_conv_supported(k)) {  // a few rows: bias and activation in the product's registers
    narrow_conv_forward(k, o_.filters, n, plane, params_->value(w_), bias, ws.cols.data(), relu, images);
    return;
  }
  // With one image the product's (filters, plane) layout is already NCHW: write it in place.
  float* y = n == 1 ? images : ws.scratch.data();
  sgemm(false, false, static_cast<int>(o_.filters), static_cast<int>(ncols), static_cast<int>(k), 1.0f,
        params_->value(w_), static_cast<int>(k), ws.cols.data(), static_cast<int>(ncols), 0.0f, y,
        static_cast<int>(ncols));
  // Epilogue: (filters, n, plane) -> (n, filters, plane) with bias and activation.
  for (std::size_t b = 0; b < n; ++b)
    for (std::size_t f = 0; f < o_.filters; ++f) {
      const float* src = y + f * ncols + b * plane;
      float* dst = images + b * out_image + f * plane;
      const float bf = bias ? bias[f] : 0.0f;
      if (relu) {
        for (std::size_t p = 0; p < plane; ++p) dst[p] = std::max(src[p] + bf, 0.0f);
      } else {
        for (std::size_t p = 0; p < plane; ++p) dst[p] = src[p] + bf;
      }
    }
}

void Conv2D::first_forward(Conv2D& first, ConstTensorView x, float* out, std::size_t b0, std::size_t n,
                           std::size_t worker) {
  const ConvGeometry g1 = first.geometry(x.shape.without_batch());
  const std::size_t capacity = first.workspace_images(g1);
  const std::size_t x_image = x.sample_numel(), out_image = first.o_.filters * g1.out_h() * g1.out_w();
  for (std::size_t s = 0; s < n; s += capacity)
    first.forward_chunk(g1, x.data + (b0 + s) * x_image, out + s * out_image, std::min(capacity, n - s), worker);
}

void Conv2D::reserve_chain(Conv2D& first, const Shape& x_shape, std::size_t max_batch) {
  const Shape in_shape = first.output_shape(x_shape);
  first.ensure_workspaces(x_shape, max_batch);
  ensure_workspaces(in_shape, max_batch);
  const ConvGeometry g = geometry(in_shape);
  for (auto& ws : ws_) {  // allocates once
    ws.pool_in.resize(Shape{o_.filters, ws_cols_});
    ws.first_out.resize(in_shape.with_batch(workspace_images(g)));
    ws.first_grad.resize(in_shape.with_batch(workspace_images(g)));
  }
}

void Conv2D::forward_pooled_after(Conv2D& first, ConstTensorView x, MaxPool2D& pool, TensorView pooled) {
  if (!din_relu_mask_ || !first.dout_masked_ || first.o_.activation != Activation::relu)
    throw_runtime("Conv2D::forward_pooled_after: the first layer's ReLU must be applied by this layer's backward");
  const Shape in_shape = first.output_shape(x.shape.without_batch());
  const ConvGeometry g = geometry(in_shape);
  const std::size_t batch = x.batch(), chunk = chunk_images(g), chunks = (batch + chunk - 1) / chunk;
  reserve_chain(first, x.shape.without_batch(), batch);
  parallel_for(chunks, [&](std::size_t c0, std::size_t c1, std::size_t w) {
    Workspace& ws = ws_[w];
    for (std::size_t c = c0; c < c1; ++c) {
      const std::size_t b0 = c * chunk, n = std::min(chunk, batch - b0);
      first_forward(first, x, ws.first_out.data(), b0, n, w);
      forward_chunk(g, ws.first_out.data(), ws.pool_in.data(), n, w);
      pool.forward_images(ws.pool_in.data(), g.out_h(), g.out_w(), pooled, b0, n);
    }
  });
}

void Conv2D::backward_pooled_after(Conv2D& first, ConstTensorView x, const MaxPool2D& pool, ConstTensorView pooled,
                                   ConstTensorView dpooled) {
  const Shape in_shape = first.output_shape(x.shape.without_batch());
  const ConvGeometry g = geometry(in_shape), g1 = first.geometry(x.shape.without_batch());
  const std::size_t batch = x.batch(), chunk = chunk_images(g), chunks = (batch + chunk - 1) / chunk;
  const std::size_t plane1 = g1.out_h() * g1.out_w(), in_image = in_shape.numel(), x_image = x.sample_numel();
  reserve_chain(first, x.shape.without_batch(), batch);  // done by forward: nothing to allocate
  const std::size_t capacity1 = first.workspace_images(g1);
  parallel_for(chunks, [&](std::size_t c0, std::size_t c1, std::size_t w) {
    Workspace& ws = ws_[w];
    start_gradients(w);
    first.start_gradients(w);
    for (std::size_t c = c0; c < c1; ++c) {
      const std::size_t b0 = c * chunk, n = std::min(chunk, batch - b0);
      first_forward(first, x, ws.first_out.data(), b0, n, w);
      backward_chunk(g, ws.first_out.data(), from_pool(pool, g, o_.filters, pooled, dpooled), ws.first_grad.data(), b0, n,
                     w);
      // The first layer's output gradient, its ReLU applied by col2im: its dZ as it stands.
      const float* grad = ws.first_grad.data();
      for (std::size_t s = 0; s < n; s += capacity1) {
        const std::size_t m = std::min(capacity1, n - s);
        first.backward_chunk(
            g1, x.data + (b0 + s) * x_image,
            [&](std::size_t image, std::size_t filter, float* dz) {
              std::copy_n(grad + (image - b0) * in_image + filter * plane1, plane1, dz);
            },
            nullptr, b0 + s, m, w);
      }
    }
  });
  const std::size_t workers = std::min<std::size_t>(static_cast<std::size_t>(compute_threads()), chunks);
  finish_gradients(g, workers);
  first.finish_gradients(g1, workers);
}

template <class PlaneGradient>
void Conv2D::backward_chunk(const ConvGeometry& g, const float* in, const PlaneGradient& dz_plane, float* din,
                            std::size_t b0, std::size_t n, std::size_t worker) {
  const std::size_t plane = g.out_h() * g.out_w(), k = g.rows(), ncols = n * plane;
  Workspace& ws = ws_[worker];
  float* db = !o_.bias ? nullptr : worker == 0 ? params_->grad(b_) : ws.db.data();
  // dZ in the product's layout (filters, n*plane); bias gradient.
  float* dz = ws.scratch.data();
  for (std::size_t b = 0; b < n; ++b)
    for (std::size_t f = 0; f < o_.filters; ++f) {
      float* dst = dz + f * ncols + b * plane;
      dz_plane(b0 + b, f, dst);
      if (db) db[f] += sum(dst, plane);
    }
  // dW^T += cols dZ^T: (K x ncols) by (ncols x filters), with the chunk's columns recomputed. The
  // transposed product: OpenBLAS runs this shape 10-15% faster than dZ cols^T (filters x K).
  im2col(g, n, in, ws.cols.data());
  if (narrow_conv_supported(k))
    narrow_conv_weight_gradient(k, o_.filters, ncols, ws.cols.data(), dz, ws.dwt.data());
  else
    sgemm(false, true, static_cast<int>(k), static_cast<int>(o_.filters), static_cast<int>(ncols), 1.0f,
          ws.cols.data(), static_cast<int>(ncols), dz, static_cast<int>(ncols), 1.0f, ws.dwt.data(),
          static_cast<int>(o_.filters));
  if (din == nullptr) return;
  // dcols = W^T dZ (K x ncols), written over the columns (used above), then col2im.
  sgemm(true, false, static_cast<int>(k), static_cast<int>(ncols), static_cast<int>(o_.filters), 1.0f,
        params_->value(w_), static_cast<int>(k), dz, static_cast<int>(ncols), 0.0f, ws.cols.data(),
        static_cast<int>(ncols));
  col2im(g, n, ws.cols.data(), din, din_relu_mask_ ? in : nullptr);
}

template <class PlaneGradient>
void Conv2D::backward_chunks(ConstTensorView in, TensorView din, const PlaneGradient& dz_plane) {
  const ConvGeometry g = geometry(in.shape.without_batch());
  const std::size_t batch = in.batch(), chunk = chunk_images(g), chunks = (batch + chunk - 1) / chunk;
  const std::size_t in_image = in.sample_numel();
  ensure_workspaces(in.shape.without_batch(), batch);
  parallel_for(chunks, [&](std::size_t c0, std::size_t c1, std::size_t w) {
    start_gradients(w);
    for (std::size_t c = c0; c < c1; ++c)
      backward_chunk(g, in.data + c * chunk * in_image, dz_plane, din.empty() ? nullptr : din.data + c * chunk * in_image,
                     c * chunk, std::min(chunk, batch - c * chunk), w);
  });
  finish_gradients(g, std::min<std::size_t>(static_cast<std::size_t>(compute_threads()), chunks));
}

void Conv2D::start_gradients(std::size_t worker) {
  ws_[worker].dwt.fill(0.0f);
  if (worker > 0) ws_[worker].db.fill(0.0f);  // other threads apart; thread 0 straight into the bias gradient
}

void Conv2D::finish_gradients(const ConvGeometry& g, std::size_t workers) {
  // Each thread's dW^T, transposed into the weights' gradient (filters x K).
  const std::size_t k = g.rows(), filters = o_.filters;
  float* dw = params_->grad(w_);
  for (std::size_t w = 0; w < workers; ++w) {
    const float* dwt = ws_[w].dwt.data();
    for (std::size_t f = 0; f < filters; ++f)
      for (std::size_t r = 0; r < k; ++r) dw[f * k + r] += dwt[r * filters + f];
    if (o_.bias && w > 0)
      for (std::size_t f = 0; f < filters; ++f) params_->grad(b_)[f] += ws_[w].db.data()[f];
  }
}

void Conv2D::backward(ConstTensorView in, ConstTensorView out, ConstTensorView dout, TensorView din) {
  const std::size_t out_image = out.shape.without_batch().numel(), plane = out.shape[2] * out.shape[3];
  const Activation act = dout_masked_ ? Activation::none : o_.activation;
  backward_chunks(in, din, [&](std::size_t image, std::size_t filter, float* dz) {
    const std::size_t at = image * out_image + filter * plane;
    activation_backward(act, out.data + at, dout.data + at, dz, plane);
  });
}

void Conv2D::backward_pooled(ConstTensorView in, const MaxPool2D& pool, ConstTensorView pooled,
                             ConstTensorView dpooled, TensorView din) {
  const ConvGeometry g = geometry(in.shape.without_batch());
  backward_chunks(in, din, from_pool(pool, g, o_.filters, pooled, dpooled));
}

}  // namespace scalelab::nn
