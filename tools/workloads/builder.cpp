// Layer formulas (see builder.h for the conventions).
#include "workloads/builder.h"

#include "core/error.h"

namespace scalelab::workloads {

namespace {

std::size_t out_size(std::size_t in, std::size_t k, std::size_t s, std::size_t p, bool ceil_mode, const std::string& name) {
  if (in + 2 * p < k) throw_runtime(name + ": the window is larger than the padded input");
  const std::size_t span = in + 2 * p - k;
  std::size_t out = span / s + 1;
  // PyTorch's ceil_mode: round up, but a window must start inside the input or its left padding.
  if (ceil_mode && span % s != 0 && (out) * s < in + p) ++out;
  return out;
}

}  // namespace

void Builder::push(const std::string& name, sim::LayerKind kind, double flops, std::size_t params, double in, double out) {
  w_.layers.push_back({name, kind, flops, params, in, out, ""});
}

Act Builder::conv(const std::string& name, Act in, std::size_t out_channels, Kernel k, bool bias, std::size_t groups) {
  if (in.c % groups != 0 || out_channels % groups != 0) throw_runtime(name + ": channels not divisible by the groups");
  const Act out{out_channels, out_size(in.h, k.kh, k.sh, k.ph, false, name), out_size(in.w, k.kw, k.sw, k.pw, false, name)};
  const double macs = double(in.c / groups) * double(k.kh * k.kw) * out.elems();
  const std::size_t params = in.c / groups * out_channels * k.kh * k.kw + (bias ? out_channels : 0);
  push(name, sim::LayerKind::conv, 2 * macs, params, in.elems(), out.elems());
  return out;
}

Act Builder::bn(const std::string& name, Act in) {
  push(name, sim::LayerKind::norm, 4 * in.elems(), 2 * in.c, in.elems(), in.elems());
  return in;
}

Act Builder::elementwise(const std::string& name, Act in) {
  push(name, sim::LayerKind::elementwise, in.elems(), 0, in.elems(), in.elems());
  return in;
}

Act Builder::add(const std::string& name, Act in) {
  push(name, sim::LayerKind::elementwise, in.elems(), 0, 2 * in.elems(), in.elems());
  return in;
}

Act Builder::concat(const std::string& name, const std::vector<Act>& parts) {
  Act out{0, parts.at(0).h, parts.at(0).w};
  for (const Act& p : parts) {
    if (p.h != out.h || p.w != out.w) throw_runtime(name + ": concatenated parts differ in height or width");
    out.c += p.c;
  }
  push(name, sim::LayerKind::elementwise, 0, 0, out.elems(), out.elems());
  return out;
}

Act Builder::maxpool(const std::string& name, Act in, Kernel k, bool ceil_mode) {
  const Act out{in.c, out_size(in.h, k.kh, k.sh, k.ph, ceil_mode, name), out_size(in.w, k.kw, k.sw, k.pw, ceil_mode, name)};
  push(name, sim::LayerKind::pool, double(k.kh * k.kw) * out.elems(), 0, in.elems(), out.elems());
  return out;
}

Act Builder::avgpool(const std::string& name, Act in, Kernel k) {
  const Act out{in.c, out_size(in.h, k.kh, k.sh, k.ph, false, name), out_size(in.w, k.kw, k.sw, k.pw, false, name)};
  push(name, sim::LayerKind::pool, double(k.kh * k.kw) * out.elems(), 0, in.elems(), out.elems());
  return out;
}

Act Builder::global_avgpool(const std::string& name, Act in) {
  push(name, sim::LayerKind::pool, in.elems(), 0, in.elems(), double(in.c));
  return {in.c, 1, 1};
}

Act Builder::linear(const std::string& name, Act in, std::size_t out_features, bool bias) {
  const auto in_f = static_cast<std::size_t>(in.elems());
  push(name, sim::LayerKind::matmul, 2.0 * double(in_f) * double(out_features), in_f * out_features + (bias ? out_features : 0),
       in.elems(), double(out_features));
  return {out_features, 1, 1};
}

void Builder::embedding(const std::string& name, std::size_t rows, std::size_t dim, std::size_t lookups) {
  push(name, sim::LayerKind::embedding, 0, rows * dim, double(lookups), double(lookups) * double(dim));
}

void Builder::token_matmul(const std::string& name, std::size_t seq, std::size_t in_f, std::size_t out_f, bool bias, bool tied) {
  const std::size_t params = tied ? 0 : in_f * out_f + (bias ? out_f : 0);
  push(name, sim::LayerKind::matmul, 2.0 * double(seq) * double(in_f) * double(out_f), params, double(seq) * double(in_f),
       double(seq) * double(out_f));
}

void Builder::attention(const std::string& name, std::size_t seq, std::size_t hidden, std::size_t heads) {
  if (hidden % heads != 0) throw_runtime(name + ": hidden size not divisible by the heads");
  const double s = double(seq), h = double(hidden);
  // Q K^T and softmax(.) V: per head 2*s*s*d each, d = hidden/heads; softmax 5 per score.
  const double flops = 2 * (2 * s * s * h) + 5 * double(heads) * s * s;
  push(name, sim::LayerKind::attention, flops, 0, 3 * s * h, s * h);
}

void Builder::layer_norm(const std::string& name, std::size_t seq, std::size_t hidden) {
  const double n = double(seq) * double(hidden);
  push(name, sim::LayerKind::norm, 4 * n, 2 * hidden, n, n);
}

void Builder::token_elementwise(const std::string& name, std::size_t elems, double in_factor) {
  push(name, sim::LayerKind::elementwise, double(elems), 0, in_factor * double(elems), double(elems));
}

}  // namespace scalelab::workloads
