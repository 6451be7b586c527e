// DeviceModel (gpu/device_model.h): the host model's layers mapped to device layers, buffers
// allocated once, forward and backward enqueued on the compute stream.
#include "gpu/device_model.h"

#include <algorithm>
#include <string>

#include "core/error.h"
#include "gpu/cuda_check.h"
#include "gpu/layer_kernels.h"
#include "gpu/precision_kernels.h"
#include "nn/batch_norm.h"
#include "nn/conv2d.h"
#include "nn/dense.h"
#include "nn/dropout.h"
#include "nn/flatten.h"
#include "nn/maxpool2d.h"
#include "nn/model.h"
#include "nn/relu.h"
#include "nn/residual_block.h"

namespace scalelab::gpu {
namespace {

// What NVIDIA's cuBLAS documentation recommends for Hopper (32 MiB; smaller GPUs need less).
constexpr std::size_t kCublasWorkspaceBytes = std::size_t{32} << 20;

// The parameter slots of a host layer: its own parameter ids (weight, then bias), as its
// declare() registered them; `next` checks that layers take the flat buffer in order.
ParamSlots take_slots(const nn::ParameterSet& p, std::size_t& next, const nn::Layer& layer, const std::string& where) {
  const std::vector<std::size_t> ids = layer.parameter_ids();
  if (ids.empty() || ids.size() > 2 || ids[0] != next || (ids.size() == 2 && ids[1] != next + 1)) {
    throw_runtime("gpu: the " + where + " layer's parameters are not where the parameter layout says (" +
                  p.layout_signature() + ")");
  }
  ParamSlots s;
  s.weight = ids[0];
  s.weight_offset = p.info(ids[0]).offset;
  if (ids.size() == 2) {
    s.has_bias = true;
    s.bias = ids[1];
    s.bias_offset = p.info(ids[1]).offset;
  }
  next += ids.size();
  return s;
}

// What a device layer is built from: its host twin, the per-sample shapes, the host parameter set
// (take() hands out a layer's slots in layout order), the largest batch, the context, and its
// random stream.
struct HostLayer {
  const nn::Layer& layer;
  nn::Shape in, out;
  const nn::ParameterSet& params;
  std::size_t& next_param;
  std::string where;
  std::size_t max_batch;
  DeviceContext& ctx;
  Rng rng;
  const nn::Layer* next;  // the host layer after this one (null for the last)
  bool nhwc;              // Conv2D: NHWC input and output; MaxPooling2D: NHWC input (plan_nhwc)

  [[nodiscard]] ParamSlots take(const nn::Layer& l) const { return take_slots(params, next_param, l, where); }
  [[nodiscard]] NormSpec norm(const nn::BatchNorm& bn, const nn::Shape& shape) const {
    NormSpec s;
    s.channels = shape[0];
    s.spatial = shape.numel() / shape[0];
    s.momentum = bn.momentum();
    s.eps = bn.eps();
    s.slots = take(bn);
    s.mean_offset = params.state_info()[bn.running_mean_id()].offset;
    s.var_offset = params.state_info()[bn.running_var_id()].offset;
    return s;
  }
};

// Whether `pool` (a host layer, or null) is a max-pool that applies the ReLU derivative of the
// convolution before it: the host model decides (nn::Model's fusion, MaxPool2D::applies_relu_mask),
// and the device layers follow (gpu/layer_kernels.h, maxpool_backward).
bool pool_applies_relu_mask(const nn::Layer* pool) {
  return pool != nullptr && pool->type() == "MaxPooling2D" &&
         static_cast<const nn::MaxPool2D*>(pool)->applies_relu_mask();
}

ConvSpec conv_spec(const nn::Conv2D& c, const nn::Shape& in) {
  const nn::Conv2DOptions& o = c.options();
  return {in[0], in[1], in[2], o.filters, o.kernel, o.stride, o.pad, o.activation == nn::Activation::relu};
}

// One factory per host layer type. The table below is keyed by nn::Layer::type(), so each
// factory's cast is to the class that returns that type.
std::unique_ptr<DeviceLayer> conv(const HostLayer& h) {
  const auto& c = static_cast<const nn::Conv2D&>(h.layer);
  ConvSpec spec = conv_spec(c, h.in);
  spec.relu_applied_downstream = pool_applies_relu_mask(h.next);
  spec.nhwc = h.nhwc;
  return make_device_conv(spec, h.take(c), h.max_batch, h.ctx);
}
std::unique_ptr<DeviceLayer> dense(const HostLayer& h) {
  const bool relu = static_cast<const nn::Dense&>(h.layer).activation() == nn::Activation::relu;
  return make_device_dense(h.in[0], h.out[0], relu, h.take(h.layer), h.max_batch, h.ctx.precision);
}
std::unique_ptr<DeviceLayer> maxpool(const HostLayer& h) {
  const auto& pool = static_cast<const nn::MaxPool2D&>(h.layer);
  if (half_storage(h.ctx.precision) && pool.stride() < pool.pool()) {
    throw_parameter(ErrorKind::usage, "precision",
                    std::string(precision_name(h.ctx.precision)) + ": the " + h.where +
                        " layer's windows overlap, which the CUDA engine pools in float32 only; use fp32 or tf32");
  }
  return make_device_maxpool(h.in, pool.pool(), pool.stride(), pool.applies_relu_mask(), h.max_batch, h.ctx.precision,
                             h.nhwc);
}
std::unique_ptr<DeviceLayer> dropout(const HostLayer& h) {
  return make_device_dropout(h.in, static_cast<const nn::Dropout&>(h.layer).rate(), h.rng, h.ctx.precision);
}
std::unique_ptr<DeviceLayer> relu(const HostLayer& h) { return make_device_relu(h.in, h.ctx.precision); }
std::unique_ptr<DeviceLayer> flatten(const HostLayer&) { return make_device_flatten(); }
std::unique_ptr<DeviceLayer> global_avg_pool(const HostLayer& h) { return make_device_global_avg_pool(h.in); }
std::unique_ptr<DeviceLayer> batch_norm(const HostLayer& h) {
  return make_device_batch_norm(h.norm(static_cast<const nn::BatchNorm&>(h.layer), h.in));
}
std::unique_ptr<DeviceLayer> residual_block(const HostLayer& h) {
  const auto& b = static_cast<const nn::ResidualBlock&>(h.layer);
  ResidualSpec s;
  s.project = b.projects_input();
  // In declaration order, as take() requires: conv1, bn1, conv2, bn2, shortcut, shortcut_bn.
  s.conv1 = conv_spec(b.conv1(), h.in);
  s.conv1_slots = h.take(b.conv1());
  s.bn1 = h.norm(b.bn1(), h.out);
  s.conv2 = conv_spec(b.conv2(), h.out);
  s.conv2_slots = h.take(b.conv2());
  s.bn2 = h.norm(b.bn2(), h.out);
  if (s.project) {
    s.shortcut = conv_spec(b.shortcut(), h.in);
    s.shortcut_slots = h.take(b.shortcut());
    s.shortcut_bn = h.norm(b.shortcut_bn(), h.out);
  }
  return make_device_residual_block(s, h.max_batch, h.ctx);
}

// Which layers work in NHWC (gpu/device_layers.h, ConvSpec::nhwc), in bf16 and fp16 only (where
// cuDNN's tensor-core kernels would otherwise convert every NCHW tensor there and back): each run
// of convolutions that starts on a one-channel input (the same bytes in either layout) and ends in
// a max-pool that can read NHWC (stride == pool, whole windows, a tile in shared memory), which
// hands NCHW on. Everything else stays NCHW, as lib/nn.
std::vector<char> plan_nhwc(nn::Model& host, Precision precision) {
  const std::size_t layers = host.layer_count();
  std::vector<char> nhwc(layers, 0);
  if (!half_storage(precision)) return nhwc;
  std::vector<nn::Shape> in(layers);
  nn::Shape s = host.input_shape();
  for (std::size_t i = 0; i < layers; ++i) {
    in[i] = s;
    s = host.layer(i).output_shape(s);
  }
  std::size_t i = 0;
  while (i < layers) {
    if (host.layer(i).type() != "Conv2D" || in[i].rank() != 3 || in[i][0] != 1) {
      ++i;
      continue;
    }
    std::size_t j = i;
    while (j < layers && host.layer(j).type() == "Conv2D") ++j;
    if (j < layers && host.layer(j).type() == "MaxPooling2D") {
      const auto& pool = static_cast<const nn::MaxPool2D&>(host.layer(j));
      const nn::Shape& p = in[j];
      if (nhwc_pool_fits(static_cast<int>(p[1]), static_cast<int>(p[2]), static_cast<int>(p[0]),
                         static_cast<int>(pool.pool()), static_cast<int>(pool.stride()), activation_bytes(precision))) {
        for (std::size_t k = i; k <= j; ++k) nhwc[k] = 1;
      }
    }
    i = j + 1;
  }
  return nhwc;
}

struct Registration {
  std::string_view type;  // nn::Layer::type()
  std::unique_ptr<DeviceLayer> (*make)(const HostLayer&);
  bool half;              // has bf16 and fp16 kernels (gpu/precision.h)
};
constexpr Registration kDeviceLayers[] = {
    {"Conv2D", &conv, true}, {"Dense", &dense, true}, {"MaxPooling2D", &maxpool, true},
    {"Dropout", &dropout, true}, {"ReLU", &relu, true}, {"Flatten", &flatten, true},
    {"GlobalAveragePooling2D", &global_avg_pool, false}, {"BatchNormalization", &batch_norm, false},
    {"ResidualBlock", &residual_block, false},
};

const Registration* registration(const std::string& type) {
  for (const Registration& r : kDeviceLayers) {
    if (r.type == type) return &r;
  }
  return nullptr;
}

// The zoo's models every layer of which has a device twin (with 16-bit kernels, when `half`): what
// `--device cuda` can train (in bf16 and fp16).
std::string models_that_run(bool half) {
  std::string s;
  for (const std::string& name : nn::model_names()) {
    const auto m = nn::make_model(name, nn::Shape{1, 28, 28}, 10, 1);
    bool all = true;
    for (std::size_t i = 0; i < m->layer_count(); ++i) {
      const Registration* r = registration(m->layer(i).type());
      all = all && r != nullptr && (!half || r->half);
    }
    if (all) s += (s.empty() ? "" : ", ") + name;
  }
  return s;
}

}  // namespace

DeviceModel::DeviceModel(nn::Model& host, std::size_t max_batch, std::uint64_t seed, std::uint64_t rng_stream,
                         cudaStream_t stream, Precision precision)
    : max_batch_(max_batch), classes_(host.num_classes()), input_shape_(host.input_shape()),
      size_(host.parameters().size()) {
  if (max_batch == 0) throw_usage("gpu: a DeviceModel needs a batch of at least 1");
  ctx_.stream = stream;
  ctx_.precision = precision;
  try {
    cublas_check(cublasCreate(&ctx_.cublas), "cublasCreate");
    cublas_check(cublasSetStream(ctx_.cublas, stream), "cublasSetStream");
    if (precision == Precision::tf32) {
      cublas_check(cublasSetMathMode(ctx_.cublas, CUBLAS_TF32_TENSOR_OP_MATH), "cublasSetMathMode (TF32)");
    }
    // cuBLAS's own workspace, given once (else it allocates one at the first product of a step).
    cublas_workspace_.resize(kCublasWorkspaceBytes, "the cuBLAS workspace");
    cublas_check(cublasSetWorkspace(ctx_.cublas, cublas_workspace_.data(), kCublasWorkspaceBytes), "cublasSetWorkspace");
    cudnn_check(cudnnCreate(&ctx_.cudnn), "cudnnCreate");
    cudnn_check(cudnnSetStream(ctx_.cudnn, stream), "cudnnSetStream");
    values_.resize(size_, "the parameter values");
    grads_.resize(size_, "the parameter gradients");
    state_.resize(host.parameters().state().size(), "the running statistics");
    ctx_.values = values_.data();
    ctx_.grads = grads_.data();
    ctx_.state = state_.data();
    if (half_storage(precision)) {
      const std::size_t half = activation_bytes(precision);
      half_values_.resize(size_ * half, "the 16-bit weights");
      half_grads_.resize(size_ * half, "the 16-bit weight gradients");
      half_input_.resize(max_batch * input_shape_.numel() * half, "the 16-bit input batch");
      half_dlogits_.resize(max_batch * classes_ * half, "the 16-bit logit gradients");
      logits_.resize(max_batch * classes_, "the float32 logits");
      ctx_.half_values = half_values_.data();
      ctx_.half_grads = half_grads_.data();
    }
    build(host, seed, rng_stream);
  } catch (...) {
    if (ctx_.cudnn != nullptr) (void)cudnnDestroy(ctx_.cudnn);
    if (ctx_.cublas != nullptr) (void)cublasDestroy(ctx_.cublas);
    throw;
  }
}

DeviceModel::~DeviceModel() {
  layers_.clear();  // their cuDNN descriptors go before the handle
  (void)cudnnDestroy(ctx_.cudnn);
  (void)cublasDestroy(ctx_.cublas);
}

void DeviceModel::build(nn::Model& host, std::uint64_t seed, std::uint64_t rng_stream) {
  const nn::ParameterSet& params = host.parameters();
  std::size_t next_param = 0;
  nn::Shape in = input_shape_;
  std::size_t largest = 0, workspace = 0;
  bool seen_compute = false;
  const std::vector<char> nhwc = plan_nhwc(host, ctx_.precision);
  for (std::size_t i = 0; i < host.layer_count(); ++i) {
    nn::Layer& l = host.layer(i);
    const nn::Shape out = l.output_shape(in);
    const std::string where = l.type() + " (layer " + std::to_string(i + 1) + ")";
    const Registration* r = registration(l.type());
    if (r == nullptr) {
      throw_parameter(ErrorKind::usage, "device",
                      "cuda: model " + host.name() + " has a " + l.type() + " layer, which the CUDA engine does not "
                      "implement yet (" + models_that_run(false) + " run on it); use the cpu device");
    }
    if (half_storage(ctx_.precision) && !r->half) {
      throw_parameter(ErrorKind::usage, "precision",
                      std::string(precision_name(ctx_.precision)) + ": model " + host.name() + " has a " + l.type() +
                          " layer, which the CUDA engine computes in float32 only (" + models_that_run(true) +
                          " run in bf16 and fp16); use fp32 or tf32");
    }
    std::unique_ptr<DeviceLayer> d = r->make(
        HostLayer{l, in, out, params, next_param, where, max_batch_, ctx_, Rng(nn::Model::layer_seed(seed, i), rng_stream),
                  i + 1 < host.layer_count() ? &host.layer(i + 1) : nullptr, nhwc[i] != 0});
    workspace = std::max(workspace, d->workspace_bytes());
    if (!d->aliases_input() && !seen_compute) {
      first_compute_ = i;
      seen_compute = true;
    }
    acts_.emplace_back();
    if (!d->aliases_input()) {
      const std::size_t bytes = max_batch_ * out.numel() * activation_bytes(ctx_.precision);
      acts_.back().resize(bytes, "the " + where + " activations");
      // Zeroed once: a convolution's fused epilogue names its output as cuDNN's z (scaled by 0),
      // which must not hold a NaN from whatever the allocation held before.
      cuda_check(cudaMemset(acts_.back().data(), 0, bytes), "cudaMemset of the " + where + " activations");
    }
    largest = std::max(largest, in.numel());
    out_shapes_.push_back(out);
    layer_params_.push_back(d->params());
    layers_.push_back(std::move(d));
    in = out;
  }
  if (next_param != params.count())
    throw_runtime("gpu: model " + host.name() + " has parameters no device layer took (" + params.layout_signature() + ")");
  if (!(in == nn::Shape{classes_})) throw_runtime("gpu: model " + host.name() + " does not end in " + std::to_string(classes_) + " logits");
  workspace_.resize(workspace, "the cuDNN workspace");
  ctx_.workspace = workspace_.data();
  ctx_.workspace_bytes = workspace;
  grad_buf_[0].resize(max_batch_ * largest * activation_bytes(ctx_.precision), "the input gradients");
  grad_buf_[1].resize(max_batch_ * largest * activation_bytes(ctx_.precision), "the input gradients");
  outputs_.assign(layers_.size(), nullptr);
}

// On the compute stream and waited for: a plain cudaMemcpy from pageable memory may return before
// its DMA ends, and a non-blocking stream is not ordered after it.
void DeviceModel::load_values(const nn::ParameterSet& host) {
  cuda_check(cudaMemcpyAsync(values_.data(), host.values().data(), size_ * sizeof(float), cudaMemcpyHostToDevice,
                             ctx_.stream),
             "cudaMemcpyAsync of the parameters to the device");
  if (!host.state().empty()) {
    cuda_check(cudaMemcpyAsync(state_.data(), host.state().data(), host.state().size() * sizeof(float),
                               cudaMemcpyHostToDevice, ctx_.stream),
               "cudaMemcpyAsync of the running statistics to the device");
  }
  cuda_check(cudaStreamSynchronize(ctx_.stream), "cudaStreamSynchronize after copying the parameters in");
}

void DeviceModel::store_values(nn::ParameterSet& host) {
  cuda_check(cudaStreamSynchronize(ctx_.stream), "cudaStreamSynchronize before copying the parameters back");
  cuda_check(cudaMemcpy(host.values().data(), values_.data(), size_ * sizeof(float), cudaMemcpyDeviceToHost),
             "cudaMemcpy of the parameters to the host");
  if (!host.state().empty()) {
    cuda_check(cudaMemcpy(host.state().data(), state_.data(), host.state().size() * sizeof(float),
                          cudaMemcpyDeviceToHost),
               "cudaMemcpy of the running statistics to the host");
  }
}

void DeviceModel::store_grads(nn::ParameterSet& host) {
  cuda_check(cudaStreamSynchronize(ctx_.stream), "cudaStreamSynchronize before copying the gradients back");
  cuda_check(cudaMemcpy(host.grads().data(), grads_.data(), size_ * sizeof(float), cudaMemcpyDeviceToHost),
             "cudaMemcpy of the gradients to the host");
}

void DeviceModel::zero_grad() {
  cuda_check(cudaMemsetAsync(grads_.data(), 0, size_ * sizeof(float), ctx_.stream), "cudaMemsetAsync of the gradients");
}

void DeviceModel::skip_random(std::uint64_t forwards) {
  for (auto& l : layers_) l->skip_random(forwards);
}

const float* DeviceModel::forward(const float* input, std::size_t n, bool training) {
  prepare_forward(training);
  return enqueue_forward(input, n, training);
}

void DeviceModel::prepare_forward(bool training) {
  for (auto& l : layers_) l->prepare_forward(training, ctx_);
}

const float* DeviceModel::enqueue_forward(const float* input, std::size_t n, bool training) {
  if (n == 0 || n > max_batch_)
    throw_runtime("gpu: a batch of " + std::to_string(n) + " samples for a model reserved for " + std::to_string(max_batch_));
  const void* cur = input;
  if (half_storage(ctx_.precision)) {
    // The weights as they are now (the optimizer changed the float32 ones), and the batch, in 16 bits.
    with_element(ctx_.precision, [&](auto zero) {
      using T = decltype(zero);
      cast_from_float(values_.data(), static_cast<T*>(ctx_.half_values), size_, nullptr, ctx_.stream);
      cast_from_float(input, reinterpret_cast<T*>(half_input_.data()), n * input_shape_.numel(), nullptr, ctx_.stream);
    });
    cur = half_input_.data();
  }
  last_input_ = cur;
  for (std::size_t i = 0; i < layers_.size(); ++i) {
    if (!layers_[i]->aliases_input()) {
      layers_[i]->forward(cur, acts_[i].data(), n, training, ctx_);
      cur = acts_[i].data();
    }
    outputs_[i] = cur;
  }
  if (!half_storage(ctx_.precision)) return static_cast<const float*>(cur);
  with_element(ctx_.precision, [&](auto zero) {
    cast_to_float(static_cast<const decltype(zero)*>(cur), logits_.data(), n * classes_, ctx_.stream);
  });
  return logits_.data();
}

void DeviceModel::backward(float* dlogits, std::size_t n, const std::function<void(std::size_t param)>& on_final) {
  void* dout = dlogits;
  if (half_storage(ctx_.precision)) {
    // In 16 bits, times the loss scale where there is one (fp16).
    with_element(ctx_.precision, [&](auto zero) {
      using T = decltype(zero);
      cast_from_float(dlogits, reinterpret_cast<T*>(half_dlogits_.data()), n * classes_, loss_scale_, ctx_.stream);
    });
    dout = half_dlogits_.data();
  }
  int next = 0;
  for (std::size_t i = layers_.size(); i-- > 0;) {
    DeviceLayer& l = *layers_[i];
    if (l.aliases_input()) continue;  // the same memory, reshaped
    const void* in = i ? outputs_[i - 1] : last_input_;
    void* din = i > first_compute_ ? grad_buf_[next].data() : nullptr;
    l.backward(in, outputs_[i], dout, din, n, ctx_);
    if (on_final) {
      const std::vector<std::size_t>& ps = layer_params_[i];
      for (auto it = ps.rbegin(); it != ps.rend(); ++it) on_final(*it);
    }
    if (din == nullptr) break;
    dout = din;
    next ^= 1;
  }
}

}  // namespace scalelab::gpu
