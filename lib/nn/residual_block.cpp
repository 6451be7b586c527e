// ResidualBlock forward and backward through its sublayers (see residual_block.h).
#include "nn/residual_block.h"

#include <algorithm>

namespace scalelab::nn {
namespace {

Conv2DOptions conv_options(std::size_t filters, std::size_t kernel, std::size_t stride) {
  Conv2DOptions o;
  o.filters = filters;
  o.kernel = kernel;
  o.stride = stride;
  o.pad = (kernel - 1) / 2;
  o.bias = false;
  o.init = Init::he_uniform;
  return o;
}

TensorView view(Tensor& t, const Shape& per_sample, std::size_t n) { return {t.data(), per_sample.with_batch(n)}; }

}  // namespace

ResidualBlock::ResidualBlock(std::size_t filters, std::size_t stride)
    : filters_(filters), stride_(stride), conv1_(conv_options(filters, 3, stride)), conv2_(conv_options(filters, 3, 1)),
      conv_s_(conv_options(filters, 1, stride)) {}

Shape ResidualBlock::output_shape(const Shape& in) const { return conv1_.output_shape(in); }

void ResidualBlock::declare(ParameterSet& params, const std::string& name, const Shape& in) {
  in_shape_ = in;
  mid_shape_ = output_shape(in);
  project_ = projects(in);
  conv1_.declare(params, name + ".conv1", in);
  bn1_.declare(params, name + ".bn1", mid_shape_);
  conv2_.declare(params, name + ".conv2", mid_shape_);
  bn2_.declare(params, name + ".bn2", mid_shape_);
  if (project_) {
    conv_s_.declare(params, name + ".shortcut", in);
    bn_s_.declare(params, name + ".shortcut_bn", mid_shape_);
  }
}

void ResidualBlock::initialize(ParameterSet& params, Rng& rng) {
  conv1_.initialize(params, rng);
  bn1_.initialize(params, rng);
  conv2_.initialize(params, rng);
  bn2_.initialize(params, rng);
  if (project_) {
    conv_s_.initialize(params, rng);
    bn_s_.initialize(params, rng);
  }
}

void ResidualBlock::reserve(const Shape& in, std::size_t max_batch) {
  conv1_.reserve(in, max_batch);
  bn1_.reserve(mid_shape_, max_batch);
  conv2_.reserve(mid_shape_, max_batch);
  bn2_.reserve(mid_shape_, max_batch);
  Shape mid = mid_shape_.with_batch(max_batch);
  for (Tensor* t : {&a_c1_, &a_b1_, &a_r_, &a_c2_, &a_b2_, &g_sum_, &g_mid_a_, &g_mid_b_}) t->resize(mid);
  if (project_) {
    conv_s_.reserve(in, max_batch);
    bn_s_.reserve(mid_shape_, max_batch);
    a_cs_.resize(mid);
    a_bs_.resize(mid);
    g_in_.resize(in.with_batch(max_batch));
  }
}

FlopCount ResidualBlock::flops(const Shape& in) const {
  FlopCount t;
  auto add = [&t](FlopCount f) {
    t.forward += f.forward;
    t.backward_params += f.backward_params;
    t.backward_input += f.backward_input;
  };
  add(conv1_.flops(in));
  add(bn1_.flops(mid_shape_));
  add(conv2_.flops(mid_shape_));
  add(bn2_.flops(mid_shape_));
  if (projects(in)) {
    add(conv_s_.flops(in));
    add(bn_s_.flops(mid_shape_));
  }
  return t;
}

std::size_t ResidualBlock::parameter_count() const {
  std::size_t n = conv1_.parameter_count() + bn1_.parameter_count() + conv2_.parameter_count() + bn2_.parameter_count();
  return project_ ? n + conv_s_.parameter_count() + bn_s_.parameter_count() : n;
}

std::vector<std::size_t> ResidualBlock::parameter_ids() const {
  std::vector<const Layer*> layers = {&conv1_, &bn1_, &conv2_, &bn2_};
  if (project_) layers.insert(layers.end(), {&conv_s_, &bn_s_});
  std::vector<std::size_t> ids;
  for (const Layer* l : layers) {
    const std::vector<std::size_t> own = l->parameter_ids();
    ids.insert(ids.end(), own.begin(), own.end());
  }
  return ids;
}

std::vector<ResidualBlock::Part> ResidualBlock::parts() const {
  auto part = [](std::string name, const Layer& l, const Shape& in, const Shape& out) {
    return Part{std::move(name), l.type(), l.flops(in).forward, l.parameter_count(), in, out};
  };
  const Shape& mid = mid_shape_;
  std::vector<Part> p = {part("conv1", conv1_, in_shape_, mid), part("bn1", bn1_, mid, mid), part("relu", relu_, mid, mid),
                         part("conv2", conv2_, mid, mid), part("bn2", bn2_, mid, mid)};
  if (project_) {
    p.push_back(part("shortcut", conv_s_, in_shape_, mid));
    p.push_back(part("shortcut_bn", bn_s_, mid, mid));
  }
  p.push_back(Part{"add_relu", "Add+ReLU", 0, 0, mid, mid});
  return p;
}

void ResidualBlock::set_statistics_reducer(const StatisticsReducer& reducer) {
  bn1_.set_statistics_reducer(reducer);
  bn2_.set_statistics_reducer(reducer);
  bn_s_.set_statistics_reducer(reducer);
}

void ResidualBlock::forward(ConstTensorView in, TensorView out, bool training) {
  const std::size_t n = in.batch();
  conv1_.forward(in, view(a_c1_, mid_shape_, n), training);
  bn1_.forward(view(a_c1_, mid_shape_, n), view(a_b1_, mid_shape_, n), training);
  relu_.forward(view(a_b1_, mid_shape_, n), view(a_r_, mid_shape_, n), training);
  conv2_.forward(view(a_r_, mid_shape_, n), view(a_c2_, mid_shape_, n), training);
  bn2_.forward(view(a_c2_, mid_shape_, n), view(a_b2_, mid_shape_, n), training);
  const float* shortcut = in.data;
  if (project_) {
    conv_s_.forward(in, view(a_cs_, mid_shape_, n), training);
    bn_s_.forward(view(a_cs_, mid_shape_, n), view(a_bs_, mid_shape_, n), training);
    shortcut = a_bs_.data();
  }
  const float* main = a_b2_.data();
  for (std::size_t i = 0, e = out.numel(); i < e; ++i) out.data[i] = std::max(main[i] + shortcut[i], 0.0f);
}

void ResidualBlock::backward(ConstTensorView in, ConstTensorView out, ConstTensorView dout, TensorView din) {
  const std::size_t n = in.batch();
  TensorView ds = view(g_sum_, mid_shape_, n), ga = view(g_mid_a_, mid_shape_, n), gb = view(g_mid_b_, mid_shape_, n);
  for (std::size_t i = 0, e = out.numel(); i < e; ++i) ds.data[i] = out.data[i] > 0.0f ? dout.data[i] : 0.0f;
  bn2_.backward(view(a_c2_, mid_shape_, n), view(a_b2_, mid_shape_, n), ds, ga);
  conv2_.backward(view(a_r_, mid_shape_, n), view(a_c2_, mid_shape_, n), ga, gb);
  relu_.backward(view(a_b1_, mid_shape_, n), view(a_r_, mid_shape_, n), gb, ga);
  bn1_.backward(view(a_c1_, mid_shape_, n), view(a_b1_, mid_shape_, n), ga, gb);
  conv1_.backward(in, view(a_c1_, mid_shape_, n), gb, din);
  if (project_) {
    bn_s_.backward(view(a_cs_, mid_shape_, n), view(a_bs_, mid_shape_, n), ds, ga);
    TensorView gi{din.empty() ? nullptr : g_in_.data(), in.shape};
    conv_s_.backward(in, view(a_cs_, mid_shape_, n), ga, gi);
    if (!din.empty())
      for (std::size_t i = 0, e = in.numel(); i < e; ++i) din.data[i] += gi.data[i];
  } else if (!din.empty()) {
    for (std::size_t i = 0, e = in.numel(); i < e; ++i) din.data[i] += ds.data[i];
  }
}

}  // namespace scalelab::nn
