// Timing the nn engine's layers per kind (see cpu_rates.h).
#include "sim/cpu_rates.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
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
#include "nn/model.h"
#include "nn/relu.h"
#include "sim/lab_layers.h"

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

// A run of layers that fusion makes one unit (nn::Model::fused_groups), rebuilt as a model of its
// own (a Flatten last, so that its output is the model's "logits"): forward + backward through
// nn::Model, so that the fused code runs as in training.
struct FusedBench {
  FusedBench(nn::Model& m, std::size_t batch) : model(m) {
    model.reserve(batch);
    in.resize(model.input_shape().with_batch(batch));
    dout.resize(nn::Shape{model.num_classes()}.with_batch(batch));
    Rng rng(1234);
    for (std::size_t i = 0; i < in.numel(); ++i) in.data()[i] = rng.uniform(-1.0f, 1.0f);
    for (std::size_t i = 0; i < dout.numel(); ++i) dout.data()[i] = rng.uniform(-1.0f, 1.0f);
  }
  void step() {
    model.zero_grad();
    (void)model.forward(in.view(), true);
    model.backward(dout.view());
  }
  nn::Model& model;
  nn::Tensor in, dout;
};

// Median seconds of one step of `b` (a Bench or a FusedBench), after a warm-up; a step shorter
// than 0.2 ms is repeated within each sample so that the clock's resolution and the call's own
// overhead do not set it.
template <class B>
double time_one(B& b, int repeats) {
  const double t0 = now_seconds();
  b.step();
  const double first = now_seconds() - t0;
  const int inner = first > 2e-4 ? 1 : static_cast<int>(std::min(1000.0, std::ceil(2e-4 / std::max(first, 1e-7))));
  std::vector<double> t;
  for (int r = 0; r < repeats; ++r) {
    const double a = now_seconds();
    for (int i = 0; i < inner; ++i) b.step();
    t.push_back((now_seconds() - a) / inner);
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
  const int repeats = o.repeats > 0 ? o.repeats : (o.quick ? 3 : 9);
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
  r.rate[idx(LayerKind::embedding)] = r.rate[idx(LayerKind::elementwise)];

  // The lab models' own layers, shape by shape: convolutions at 1 and 4 times `batch` (one
  // product per image, but the more images a call holds, the less of their data stays in the
  // caches: a strided 1x1 convolution here lost 12% from 32 to 128 images), dense layers at 1, 4
  // and 16 times it (the batch is one side of their product), and the memory-bound layers at
  // several sizes.
  const LabLayers lab = lab_layers();
  for (const auto& c : lab.convs) {
    for (const std::size_t per_call : {batch, 4 * batch}) {
      Bench b(std::make_unique<nn::Conv2D>(c.options), c.in, per_call, !c.first);
      const nn::Shape& out = b.out_shape;
      r.shapes.push_back({LayerKind::conv,
                          {double(c.options.filters), double(out[1] * out[2]), double(c.in[0] * c.options.kernel * c.options.kernel),
                           double(per_call)},
                          b.flops(per_call) / time_one(b, repeats)});
    }
  }
  for (const auto& d : lab.denses) {
    for (const std::size_t per_call : {batch, 4 * batch, 16 * batch}) {
      Bench b(std::make_unique<nn::Dense>(d.units, d.activation), d.in, per_call, !d.first);
      r.shapes.push_back({LayerKind::matmul, {double(per_call), double(d.units), double(d.in.numel()), double(per_call)},
                          b.flops(per_call) / time_one(b, repeats)});
    }
  }
  // The memory-bound layers at a quarter of the batch to 16 times it: from in the caches to memory.
  for (const auto& x : lab.memory) {
    for (const std::size_t per_call : {std::max<std::size_t>(1, batch / 4), batch, 4 * batch, 16 * batch}) {
      Bench b(x.make(), x.in, per_call, true);
      const double pass_bytes = b.bytes(per_call) / 2;  // bytes() counts forward and backward
      r.traffic.push_back({x.kind, pass_bytes, b.bytes(per_call) / time_one(b, repeats)});
    }
  }
  // The runs the engine fuses, as they run in training, at 1 and 4 times the batch.
  for (auto& run : lab_fused_runs()) {
    const std::vector<WorkloadLayer> layers = workload_from_model(*run).layers;
    for (const std::size_t per_call : {batch, 4 * batch}) {
      FusedBench b(*run, per_call);
      r.fused.push_back({layers, double(per_call), time_one(b, repeats) / static_cast<double>(per_call)});
    }
  }
  Group norms;  // the norm kind's one rate: every batch norm at `batch`, together
  for (const auto& x : lab.memory) {
    if (x.kind == LayerKind::norm) add(norms, x.make(), x.in, true);
  }
  r.rate[idx(LayerKind::norm)] = norms.empty() ? r.rate[idx(LayerKind::elementwise)] : total(norms, false) / time_group(norms, repeats);
  r.measured[idx(LayerKind::norm)] = !norms.empty();
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
  c.norm_bytes_per_s = r.measured[idx(LayerKind::norm)] ? r.rate[idx(LayerKind::norm)] : 0.0;
  for (const ShapeRate& x : r.shapes) {
    c.shapes.push_back({std::string(name_of(x.kind)), x.shape.m, x.shape.n, x.shape.k, x.shape.batch, x.flops_per_s});
  }
  for (const TrafficRate& x : r.traffic) c.traffic.push_back({std::string(name_of(x.kind)), x.bytes, x.bytes_per_s});
  for (const FusedRate& f : r.fused) {
    model::ComputeRates::Fused out{{}, f.batch, f.seconds_per_sample};
    for (const WorkloadLayer& l : f.layers) {
      out.layers.push_back({std::string(name_of(l.kind)), l.forward_flops, static_cast<double>(l.params), l.in_elems, l.out_elems});
    }
    c.fused.push_back(std::move(out));
  }
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
  r.rate[idx(LayerKind::norm)] = c.norm_bytes_per_s > 0 ? c.norm_bytes_per_s : c.elementwise_bytes_per_s;
  r.rate[idx(LayerKind::embedding)] = c.elementwise_bytes_per_s;
  r.rate[idx(LayerKind::pool)] = c.pool_bytes_per_s;
  for (LayerKind k : {LayerKind::conv, LayerKind::matmul, LayerKind::elementwise, LayerKind::pool}) r.measured[idx(k)] = true;
  r.measured[idx(LayerKind::norm)] = c.norm_bytes_per_s > 0;
  for (const auto& x : c.shapes) r.shapes.push_back({parse_layer_kind(x.kind), {x.m, x.n, x.k, x.batch}, x.flops_per_s});
  for (const auto& x : c.traffic) r.traffic.push_back({parse_layer_kind(x.kind), x.bytes, x.bytes_per_s});
  for (const auto& f : c.fused) {
    FusedRate out{{}, f.batch, f.seconds_per_image};
    for (const auto& l : f.layers) {
      WorkloadLayer wl;
      wl.kind = parse_layer_kind(l.kind);
      wl.forward_flops = l.forward_flops;
      wl.params = static_cast<std::size_t>(l.params);
      wl.in_elems = l.in_elems;
      wl.out_elems = l.out_elems;
      out.layers.push_back(std::move(wl));
    }
    r.fused.push_back(std::move(out));
  }
  return r;
}

DeviceSpec cpu_device(const CpuRates& r, const std::string& title) {
  double peak_flops = 0, peak_bytes = 0;
  for (std::size_t k = 0; k < kLayerKinds; ++k) {
    double& peak = compute_bound(static_cast<LayerKind>(k)) ? peak_flops : peak_bytes;
    peak = std::max(peak, r.rate[k]);
  }
  for (const ShapeRate& x : r.shapes) peak_flops = std::max(peak_flops, x.flops_per_s);
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
  d.shape_rates = r.shapes;
  d.traffic_rates = r.traffic;
  d.fused_rates = r.fused;
  char line[512];
  std::snprintf(line, sizeof line,
                "nn engine's layers timed on %d thread(s), batch %d (%s): conv %.1f GFLOP/s, matmul %.1f GFLOP/s, "
                "elementwise %.1f GB/s, pool %.1f GB/s, norm %.1f GB/s%s",
                r.threads, r.batch, r.blas.c_str(), r.rate[idx(LayerKind::conv)] * 1e-9, r.rate[idx(LayerKind::matmul)] * 1e-9,
                r.rate[idx(LayerKind::elementwise)] * 1e-9, r.rate[idx(LayerKind::pool)] * 1e-9,
                r.rate[idx(LayerKind::norm)] * 1e-9, r.measured[idx(LayerKind::norm)] ? "" : " (the elementwise rate)");
  d.sources.emplace_back(line);
  if (!r.shapes.empty()) {
    d.sources.push_back(std::to_string(r.shapes.size()) +
                        " product shapes of the lab models timed one by one: each convolution and dense layer priced at "
                        "the nearest");
  }
  if (!r.traffic.empty()) {
    d.sources.push_back(std::to_string(r.traffic.size()) +
                        " memory-bound layers of the lab models timed at several batches: each such layer priced at "
                        "the rate of its own size");
  }
  if (!r.fused.empty()) {
    d.sources.push_back(std::to_string(r.fused.size()) +
                        " timings of the runs of layers the engine fuses, each as one unit: such a run priced at its own time");
  }
  return d;
}

namespace {

// The rates of ranks computing side by side, each no faster than alone: a rank beside another
// shares its caches and memory, so where the shared timing came out faster (by a percent or two:
// the noise of two timings taken apart) the solo one stands. Entries pair by what they measure.
model::ComputeRates no_faster_than_alone(model::ComputeRates shared, const model::ComputeRates& solo) {
  for (auto [s, o] : {std::pair{&shared.conv_flops_per_s, solo.conv_flops_per_s}, {&shared.matmul_flops_per_s, solo.matmul_flops_per_s},
                      {&shared.elementwise_bytes_per_s, solo.elementwise_bytes_per_s}, {&shared.pool_bytes_per_s, solo.pool_bytes_per_s},
                      {&shared.norm_bytes_per_s, solo.norm_bytes_per_s}}) {
    if (o > 0 && *s > 0) *s = std::min(*s, o);
  }
  for (auto& x : shared.shapes) {
    for (const auto& y : solo.shapes) {
      if (x.kind == y.kind && x.m == y.m && x.n == y.n && x.k == y.k && x.batch == y.batch) x.flops_per_s = std::min(x.flops_per_s, y.flops_per_s);
    }
  }
  for (auto& x : shared.traffic) {
    for (const auto& y : solo.traffic) {
      if (x.kind == y.kind && x.bytes == y.bytes) x.bytes_per_s = std::min(x.bytes_per_s, y.bytes_per_s);
    }
  }
  const auto same_run = [](const model::ComputeRates::Fused& a, const model::ComputeRates::Fused& b) {
    if (a.batch != b.batch || a.layers.size() != b.layers.size()) return false;
    for (std::size_t i = 0; i < a.layers.size(); ++i) {
      const auto &p = a.layers[i], &q = b.layers[i];
      if (p.kind != q.kind || p.forward_flops != q.forward_flops || p.params != q.params || p.in_elems != q.in_elems ||
          p.out_elems != q.out_elems) {
        return false;
      }
    }
    return true;
  };
  for (auto& x : shared.fused) {
    for (const auto& y : solo.fused) {
      if (same_run(x, y)) x.seconds_per_image = std::max(x.seconds_per_image, y.seconds_per_image);
    }
  }
  return shared;
}

}  // namespace

DeviceSpec device_from_profile(const model::Profile& p, const std::string& origin, bool shared) {
  if (!p.compute.measured) {
    throw_input(origin + ": the profile has no compute rates (" + p.compute.reason +
                "); run 'scalelab calibrate' to time this machine's layers");
  }
  const bool both = shared && p.compute_shared.measured;
  const model::ComputeRates c = both ? no_faster_than_alone(p.compute_shared, p.compute) : p.compute;
  DeviceSpec d = cpu_device(cpu_rates_from(c), "this machine's CPU" + (p.cpu_model.empty() ? std::string() : " (" + p.cpu_model + ")") +
                                                   ", " + std::to_string(c.threads) + " thread(s)" +
                                                   (both ? ", every rank of the node computing" : ""));
  d.sources.push_back("calibration profile " + origin + (p.created.empty() ? std::string() : " of " + p.created));
  return d;
}

}  // namespace scalelab::sim
