// DeviceOptimizer (gpu/device_optimizer.h): the host side. The CPU optimizer of the same name
// validates the options and lays out the state; this file allocates the device state and the
// LARS/LAMB tables once, computes the per-step scalars (bias corrections in double, as
// lib/optim does) and launches the kernels of device_optimizer_kernels.cu.
#include "gpu/device_optimizer.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/error.h"
#include "gpu/device_optimizer_kernels.h"
#include "optim/factory.h"
#include "optim/lars.h"  // layerwise_adapts: which tensors LARS/LAMB adapt

namespace scalelab::gpu {
namespace {

// A local check rather than gpu/cuda_check.h, which includes cuDNN's and cuBLAS's headers: this
// file is built with the CUDA runtime alone.
void check(cudaError_t rc, const std::string& what) {
  if (rc != cudaSuccess) throw_runtime("device optimizer: CUDA " + what + " failed: " + cudaGetErrorString(rc));
}

template <typename T>
T* device_copy(const std::vector<T>& host, const char* what) {
  T* d = nullptr;
  check(cudaMalloc(&d, std::max<std::size_t>(host.size(), 1) * sizeof(T)), std::string("cudaMalloc of the ") + what);
  if (!host.empty()) {
    const cudaError_t rc = cudaMemcpy(d, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice);
    if (rc != cudaSuccess) cudaFree(d);
    check(rc, std::string("copy of the ") + what);
  }
  return d;
}

}  // namespace

// The segmented reduction's tables (device memory, allocated once). Freed by its destructor,
// also when the constructor throws halfway.
struct DeviceOptimizer::Tables {
  DeviceSpan* spans = nullptr;
  unsigned* first_block = nullptr;
  unsigned* block_count = nullptr;
  unsigned char* adapt = nullptr;
  double* partial = nullptr;
  float* trust = nullptr;
  SegmentTables view{};
  Tables() = default;
  Tables(const Tables&) = delete;
  Tables& operator=(const Tables&) = delete;
  ~Tables() {
    cudaFree(spans);
    cudaFree(first_block);
    cudaFree(block_count);
    cudaFree(adapt);
    cudaFree(partial);
    cudaFree(trust);
  }
};

DeviceOptimizer::DeviceOptimizer(const std::string& name, const optim::OptimizerOptions& options,
                                 const nn::ParameterSet& layout)
    : name_(name), options_(options), size_(layout.size()), tensors_(layout.count()) {
  {
    // Same checks and messages as the CPU optimizer, and its state layout.
    auto host = optim::make_optimizer(name, options);
    host->bind(layout);
    segments_ = host->segments();
    state_size_ = host->state().size();
  }
  if (name_ == "lars" || name_ == "lamb") build_tables(layout);
  if (state_size_ > 0) {
    check(cudaMalloc(&state_, state_size_ * sizeof(float)),
          "cudaMalloc of the " + name_ + " state (" + std::to_string(state_size_) + " floats)");
    const cudaError_t rc = cudaMemset(state_, 0, state_size_ * sizeof(float));
    if (rc != cudaSuccess) cudaFree(state_);  // no destructor for a constructor that throws
    check(rc, "cudaMemset of the " + name_ + " state");
  }
  // cudaMemset and pageable cudaMemcpy may return before the device is done, and the steps run
  // on streams that do not wait for the legacy default stream: finish the set-up here.
  if (state_ || tables_) {
    const cudaError_t rc = cudaDeviceSynchronize();
    if (rc != cudaSuccess && state_) cudaFree(state_);
    check(rc, "synchronisation after setting up the " + name_ + " optimizer");
  }
}

SegmentLayout segment_layout(const std::vector<nn::ParamInfo>& params) {
  SegmentLayout s;
  s.first_block.resize(params.size());
  s.block_count.resize(params.size());
  for (std::size_t t = 0; t < params.size(); ++t) {
    const nn::ParamInfo& p = params[t];
    s.first_block[t] = static_cast<unsigned>(s.spans.size());
    for (std::size_t b = p.offset; b < p.offset + p.size; b += kOptimizerBlockSpan)
      s.spans.push_back({static_cast<unsigned>(t), b, std::min(b + kOptimizerBlockSpan, p.offset + p.size)});
    s.block_count[t] = static_cast<unsigned>(s.spans.size()) - s.first_block[t];
  }
  return s;
}

void DeviceOptimizer::build_tables(const nn::ParameterSet& layout) {
  const SegmentLayout seg = segment_layout(layout.params());
  const std::vector<DeviceSpan>& spans = seg.spans;
  std::vector<unsigned char> adapt(tensors_);
  for (std::size_t t = 0; t < tensors_; ++t) adapt[t] = optim::layerwise_adapts(layout.info(t).kind, options_) ? 1 : 0;
  auto tb = std::make_unique<Tables>();
  tb->spans = device_copy(spans, "block table");
  tb->first_block = device_copy(seg.first_block, "tensor table");
  tb->block_count = device_copy(seg.block_count, "tensor table");
  tb->adapt = device_copy(adapt, "tensor kinds");
  tb->partial = device_copy(std::vector<double>(2 * spans.size(), 0.0), "norm partials");
  tb->trust = device_copy(std::vector<float>(tensors_, 1.0f), "trust ratios");
  tb->view = {tb->spans, static_cast<unsigned>(spans.size()), tb->first_block, tb->block_count, tb->adapt,
              static_cast<unsigned>(tensors_), tb->partial, tb->trust};
  tables_ = std::move(tb);
}

DeviceOptimizer::~DeviceOptimizer() {
  if (state_) cudaFree(state_);
}

int* DeviceOptimizer::skip_flag() {
  if (scalars_.data() == nullptr) throw_runtime("gpu: the optimizer's skip flag was asked for before its first step");
  return &scalars_.data()->skip;
}

void DeviceOptimizer::prepare(float lr, cudaStream_t stream) {
  optim::Optimizer::check_lr(lr);  // the same error as the CPU optimizers
  scalars_.resize(1, "the optimizer's step scalars");  // once, at the first step (after the checks)
  const optim::OptimizerOptions& o = options_;
  StepScalars sc;
  sc.lr = lr;
  sc.first_step = steps_ == 0 ? 1 : 0;
  ++steps_;
  const double t = static_cast<double>(steps_);
  if (name_ == "adam") {
    sc.step_size = static_cast<float>(lr / (1.0 - std::pow(double(o.beta1), t)));
    sc.inv_sqrt_bc2 = static_cast<float>(1.0 / std::sqrt(1.0 - std::pow(double(o.beta2), t)));
  } else if (name_ == "lamb") {
    sc.c1 = float(1.0 / (1.0 - std::pow(double(o.beta1), t)));
    sc.c2 = float(1.0 / (1.0 - std::pow(double(o.beta2), t)));
  }
  check(launch_set_step_scalars(scalars_.data(), sc, stream), "launch of the optimizer's step scalars");
}

void DeviceOptimizer::apply(float* values, const float* grads, cudaStream_t stream) {
  const optim::OptimizerOptions& o = options_;
  float* s0 = state_;
  float* s1 = state_size_ >= 2 * size_ ? state_ + size_ : nullptr;
  const StepScalars* sc = scalars_.data();
  if (name_ == "sgd") {
    check(launch_sgd(values, grads, s0, size_, sc, o.weight_decay, o.momentum, o.dampening, o.nesterov, stream),
          "launch of the sgd kernel");
  } else if (name_ == "adam") {
    check(launch_adam(values, grads, s0, s1, size_, o.beta1, o.beta2, o.eps, o.weight_decay, sc, stream),
          "launch of the adam kernel");
  } else if (name_ == "lars") {
    check(launch_lars(values, grads, s0, tables_->view, sc, o.momentum, o.weight_decay, o.trust_coefficient, stream),
          "launch of the lars kernels");
  } else {  // lamb (make_optimizer accepted the name)
    check(launch_lamb(values, grads, s0, s1, tables_->view, sc, o.beta1, o.beta2, o.eps, o.weight_decay, stream),
          "launch of the lamb kernels");
  }
}

void DeviceOptimizer::step(float* values, const float* grads, float lr, cudaStream_t stream) {
  prepare(lr, stream);
  apply(values, grads, stream);
}

void DeviceOptimizer::download_state(std::span<float> host) const {
  if (host.size() != state_size_)
    throw_runtime("device optimizer " + name_ + ": state download into " + std::to_string(host.size()) +
                  " floats but the state holds " + std::to_string(state_size_) + "; bind the host optimizer to the same layout");
  if (state_size_ == 0) return;
  // A step may still be writing the state on any stream: wait for the device first.
  check(cudaDeviceSynchronize(), "synchronisation before the state download");
  check(cudaMemcpy(host.data(), state_, state_size_ * sizeof(float), cudaMemcpyDeviceToHost), "state download");
}

void DeviceOptimizer::upload_state(std::span<const float> host) {
  if (host.size() != state_size_)
    throw_runtime("device optimizer " + name_ + ": state upload of " + std::to_string(host.size()) +
                  " floats but the state holds " + std::to_string(state_size_) + "; bind the host optimizer to the same layout");
  if (state_size_ == 0) return;
  check(cudaDeviceSynchronize(), "synchronisation before the state upload");
  check(cudaMemcpy(state_, host.data(), state_size_ * sizeof(float), cudaMemcpyHostToDevice), "state upload");
  // A pageable copy may return before its DMA ends; the next step may run on a non-blocking stream.
  check(cudaDeviceSynchronize(), "synchronisation after the state upload");
}

void DeviceOptimizer::copy_state_to(optim::Optimizer& host) const {
  if (host.name() != name_)
    throw_runtime("device optimizer " + name_ + ": cannot copy its state into a " + host.name() + " optimizer");
  download_state(host.state());
  host.set_step_count(steps_);
}

void DeviceOptimizer::copy_state_from(const optim::Optimizer& host) {
  if (host.name() != name_)
    throw_runtime("device optimizer " + name_ + ": cannot load the state of a " + host.name() + " optimizer");
  upload_state(host.state());
  steps_ = host.step_count();
}

std::vector<float> DeviceOptimizer::trust_ratios() const {
  std::vector<float> out(tensors_, 1.0f);
  if (!tables_ || tensors_ == 0) return out;
  check(cudaDeviceSynchronize(), "synchronisation before reading the trust ratios");
  check(cudaMemcpy(out.data(), tables_->trust, tensors_ * sizeof(float), cudaMemcpyDeviceToHost), "trust ratio download");
  return out;
}

}  // namespace scalelab::gpu
