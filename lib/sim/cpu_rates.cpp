// Timing the nn engine's layers per kind (see cpu_rates.h).
#include "sim/cpu_rates.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <vector>

#include "core/error.h"
#include "core/rng.h"
#include "core/stats.h"
#include "core/timer.h"
#include "nn/blas.h"
#include "nn/compute.h"
#include "nn/conv2d.h"
#include "nn/dense.h"
#include "nn/dropout.h"
#include "nn/maxpool2d.h"
#include "nn/relu.h"

namespace scalelab::sim {

namespace {

constexpr std::size_t idx(LayerKind k) { return static_cast<std::size_t>(k); }

// One layer with its parameters and every buffer, set up once: forward + backward on a batch.
struct Bench {
  // Not copied or moved: the layer keeps a pointer to `params`.
  Bench(std::unique_ptr<nn::Layer> l, const nn::Shape& shape, std::size_t batch, bool input_gradient)
      : layer(std::move(l)), in_shape(shape), with_din(input_gradient) {
    layer->declare(params, "bench", in_shape);
    params.finalize();
    Rng rng(1234);
    layer->initialize(params, rng);
    layer->reserve(in_shape, batch);
    out_shape = layer->output_shape(in_shape);
    in.resize(in_shape.with_batch(batch));
    out.resize(out_shape.with_batch(batch));
    dout.resize(out_shape.with_batch(batch));
    din.resize(in_shape.with_batch(batch));
    for (std::size_t i = 0; i < in.numel(); ++i) in.data()[i] = rng.uniform(-1.0f, 1.0f);
    for (std::size_t i = 0; i < dout.numel(); ++i) dout.data()[i] = rng.uniform(-1.0f, 1.0f);
  }
  void step() {
    layer->forward(in.view(), out.view(), true);
    layer->backward(in.view(), out.view(), dout.view(), with_din ? din.view() : nn::TensorView{});
  }
  [[nodiscard]] double flops(std::size_t batch) const {
    const nn::FlopCount f = layer->flops(in_shape);
    return static_cast<double>(batch) * (f.forward + f.backward_params + (with_din ? f.backward_input : 0.0));
  }
  // Input and output once forward, once backward (as dout and din), float32.
  [[nodiscard]] double bytes(std::size_t batch) const {
    return static_cast<double>(batch) * 2.0 * static_cast<double>(in_shape.numel() + out_shape.numel()) * sizeof(float);
  }
  std::unique_ptr<nn::Layer> layer;
  nn::Shape in_shape, out_shape;
  bool with_din;
  nn::ParameterSet params;
  nn::Tensor in, out, dout, din;
};

// Median seconds of one pass over every bench in `group`, after one warm-up pass.
using Group = std::vector<std::unique_ptr<Bench>>;

double time_group(Group& group, int repeats) {
  for (auto& b : group) b->step();
  std::vector<double> t;
  for (int r = 0; r < repeats; ++r) {
    const double t0 = now_seconds();
    for (auto& b : group) b->step();
    t.push_back(now_seconds() - t0);
  }
  return median(t);
}

// Restores the compute thread count when the measurement ends (also on an exception).
struct ThreadsGuard {
  int saved = nn::compute_threads();
  ~ThreadsGuard() { nn::set_compute_threads(saved); }
};

}  // namespace

bool compute_bound(LayerKind k) {
  return k == LayerKind::conv || k == LayerKind::matmul || k == LayerKind::attention;
}

CpuRates measure_cpu_rates(const CpuRateOptions& o) {
  if (o.batch < 1) throw_parameter(ErrorKind::usage, "batch", std::to_string(o.batch) + ": time at least one image per call");
  const ThreadsGuard guard;
  nn::set_compute_threads(1);
  const auto batch = static_cast<std::size_t>(o.batch);
  const int repeats = o.quick ? 3 : 9;
  using nn::Shape;

  // The cnn model's layers at its shapes (nn/model.h): 1x28x28 -> Conv2D 32 -> Conv2D 64 ->
  // MaxPool 2 -> Dropout -> Flatten -> Dense 128 -> Dropout -> Dense 10.
  Group conv, dense, elementwise, pool;
  auto add = [&](Group& g, std::unique_ptr<nn::Layer> l, const Shape& in, bool din) {
    g.push_back(std::make_unique<Bench>(std::move(l), in, batch, din));
  };
  add(conv, std::make_unique<nn::Conv2D>(nn::Conv2DOptions{.filters = 32, .activation = nn::Activation::relu}), Shape{1, 28, 28},
      false);
  add(conv, std::make_unique<nn::Conv2D>(nn::Conv2DOptions{.filters = 64, .activation = nn::Activation::relu}),
      Shape{32, 26, 26}, true);
  add(dense, std::make_unique<nn::Dense>(128, nn::Activation::relu), Shape{9216}, true);
  add(dense, std::make_unique<nn::Dense>(10, nn::Activation::none), Shape{128}, true);
  add(elementwise, std::make_unique<nn::ReLU>(), Shape{64, 24, 24}, true);
  add(elementwise, std::make_unique<nn::Dropout>(0.25f), Shape{64, 12, 12}, true);
  add(pool, std::make_unique<nn::MaxPool2D>(2), Shape{64, 24, 24}, true);

  auto total = [&](const Group& g, bool flops) {
    double s = 0;
    for (const auto& b : g) s += flops ? b->flops(batch) : b->bytes(batch);
    return s;
  };
  CpuRates r;
  r.blas = nn::blas_description();
  r.threads = 1;
  r.batch = o.batch;
  r.rate[idx(LayerKind::conv)] = total(conv, true) / time_group(conv, repeats);
  r.rate[idx(LayerKind::matmul)] = total(dense, true) / time_group(dense, repeats);
  r.rate[idx(LayerKind::elementwise)] = total(elementwise, false) / time_group(elementwise, repeats);
  r.rate[idx(LayerKind::pool)] = total(pool, false) / time_group(pool, repeats);
  for (LayerKind k : {LayerKind::conv, LayerKind::matmul, LayerKind::elementwise, LayerKind::pool}) r.measured[idx(k)] = true;
  r.rate[idx(LayerKind::attention)] = r.rate[idx(LayerKind::matmul)];
  r.rate[idx(LayerKind::norm)] = r.rate[idx(LayerKind::elementwise)];
  r.rate[idx(LayerKind::embedding)] = r.rate[idx(LayerKind::elementwise)];
  return r;
}

model::ComputeRates to_compute_rates(const CpuRates& r) {
  model::ComputeRates c;
  c.measured = true;
  c.blas = r.blas;
  c.threads = r.threads;
  c.batch = r.batch;
  c.conv_flops_per_s = r.rate[idx(LayerKind::conv)];
  c.matmul_flops_per_s = r.rate[idx(LayerKind::matmul)];
  c.elementwise_bytes_per_s = r.rate[idx(LayerKind::elementwise)];
  c.pool_bytes_per_s = r.rate[idx(LayerKind::pool)];
  return c;
}

CpuRates cpu_rates_from(const model::ComputeRates& c) {
  CpuRates r;
  r.blas = c.blas;
  r.threads = c.threads;
  r.batch = c.batch;
  r.rate[idx(LayerKind::conv)] = c.conv_flops_per_s;
  r.rate[idx(LayerKind::matmul)] = c.matmul_flops_per_s;
  r.rate[idx(LayerKind::attention)] = c.matmul_flops_per_s;
  r.rate[idx(LayerKind::elementwise)] = c.elementwise_bytes_per_s;
  r.rate[idx(LayerKind::norm)] = c.elementwise_bytes_per_s;
  r.rate[idx(LayerKind::embedding)] = c.elementwise_bytes_per_s;
  r.rate[idx(LayerKind::pool)] = c.pool_bytes_per_s;
  for (LayerKind k : {LayerKind::conv, LayerKind::matmul, LayerKind::elementwise, LayerKind::pool}) r.measured[idx(k)] = true;
  return r;
}

DeviceSpec cpu_device(const CpuRates& r, const std::string& title) {
  double peak_flops = 0, peak_bytes = 0;
  for (std::size_t k = 0; k < kLayerKinds; ++k) {
    double& peak = compute_bound(static_cast<LayerKind>(k)) ? peak_flops : peak_bytes;
    peak = std::max(peak, r.rate[k]);
  }
  if (!(peak_flops > 0 && peak_bytes > 0)) {
    throw_input("cpu rates: a measured rate is missing or not positive; run 'scalelab calibrate' again");
  }
  DeviceSpec d;
  d.name = "this-cpu";
  d.title = title;
  d.kind = "cpu";
  d.fp32_tflops = peak_flops * 1e-12;
  d.mem_bw_GBps = peak_bytes * 1e-9;
  // The host's memory, as the capacity that activations and parameters must fit in.
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  d.memory_GiB = pages > 0 && page > 0 ? static_cast<double>(pages) * static_cast<double>(page) / (1024.0 * 1024 * 1024) : 0;
  for (std::size_t k = 0; k < kLayerKinds; ++k) {
    if (compute_bound(static_cast<LayerKind>(k))) d.efficiency[k] = {r.rate[k] / peak_flops, 1.0};
    else d.efficiency[k] = {1.0, r.rate[k] / peak_bytes};
  }
  char line[256];
  std::snprintf(line, sizeof line,
                "nn engine's layers timed on %d thread(s), batch %d (%s): conv %.1f GFLOP/s, matmul %.1f GFLOP/s, "
                "elementwise %.1f GB/s, pool %.1f GB/s",
                r.threads, r.batch, r.blas.c_str(), r.rate[idx(LayerKind::conv)] * 1e-9, r.rate[idx(LayerKind::matmul)] * 1e-9,
                r.rate[idx(LayerKind::elementwise)] * 1e-9, r.rate[idx(LayerKind::pool)] * 1e-9);
  d.sources.emplace_back(line);
  return d;
}

DeviceSpec device_from_profile(const model::Profile& p, const std::string& origin, bool shared) {
  if (!p.compute.measured) {
    throw_input(origin + ": the profile has no compute rates (" + p.compute.reason +
                "); run 'scalelab calibrate' to time this machine's layers");
  }
  const model::ComputeRates& c = shared && p.compute_shared.measured ? p.compute_shared : p.compute;
  DeviceSpec d = cpu_device(cpu_rates_from(c), "this machine's CPU" + (p.cpu_model.empty() ? std::string() : " (" + p.cpu_model + ")") +
                                                   ", " + std::to_string(c.threads) + " thread(s)" +
                                                   (&c == &p.compute_shared ? ", every rank of the node computing" : ""));
  d.sources.push_back("calibration profile " + origin + (p.created.empty() ? std::string() : " of " + p.created));
  return d;
}

}  // namespace scalelab::sim
