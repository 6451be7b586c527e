// The step model (sim/step_model.h): layer times by roofline, the step plan's buckets priced by
// the collective cost model on one communication stream, the optimizer, the input pipeline.
#include "sim/step_model.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <limits>
#include <optional>

#include "core/error.h"

namespace scalelab::sim {
namespace {

// Bytes of one weight as the layers read it: float16 copies under amp, float32 otherwise.
double weight_bytes(Precision p) { return p == Precision::amp ? 2.0 : 4.0; }

// Index, into the workload's layers, of each parameter tensor of workload_step_plan().
std::vector<std::size_t> param_layers(const Workload& w) {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < w.layers.size(); ++i) {
    if (w.layers[i].params > 0) out.push_back(i);
  }
  return out;
}

std::string percent(double part, double whole) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f%%", whole > 0 ? 100.0 * part / whole : 0.0);
  return buf;
}

std::string millis(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, s < 0.01 ? "%.2f ms" : "%.1f ms", s * 1e3);
  return buf;
}

// The layer kind that takes the largest share of forward + backward, and that share.
std::pair<LayerKind, double> heaviest_kind(const Workload& w, const StepResult& r) {
  std::array<double, kLayerKinds> by_kind{};
  for (std::size_t i = 0; i < w.layers.size(); ++i) {
    by_kind[static_cast<std::size_t>(w.layers[i].kind)] += r.layer_forward_s[i] + r.layer_backward_s[i];
  }
  const auto it = std::max_element(by_kind.begin(), by_kind.end());
  return {static_cast<LayerKind>(it - by_kind.begin()), *it};
}

std::string bottleneck_words(const StepInputs& in, const StepResult& r) {
  const StepParts& p = r.parts;
  if (p.pipeline_wait_s > 0) {
    return "the input pipeline: " + millis(p.input_s) + " per step to decode and copy " +
           std::to_string(in.options.batch) + " samples against " + millis(r.step_s - p.pipeline_wait_s) +
           " of computation; " + percent(p.pipeline_wait_s, r.step_s) + " of the step waits for data";
  }
  if (p.exposed_comm_s > 0.1 * r.step_s && in.collectives != nullptr) {
    const std::string which = r.buckets.size() > 1 ? "the last buckets" : "the gradients";
    return "the allreduce of " + which + " after backward ends: " + percent(p.exposed_comm_s, r.step_s) +
           " of the step (" + in.collectives->bottleneck() + ")";
  }
  if (p.optimizer_s > 0.3 * r.step_s) {
    return "the optimizer step at memory speed: " + percent(p.optimizer_s, r.step_s) + " of the step";
  }
  const auto [kind, seconds] = heaviest_kind(in.workload, r);
  return "computation: forward and backward take " + percent(p.compute_s(), r.step_s) + " of the step, " +
         std::string(name_of(kind)) + " layers " + percent(seconds, r.step_s);
}

}  // namespace

nn::StepPlan workload_step_plan(const Workload& w, const nn::AveragingOptions& averaging) {
  std::vector<nn::ParamInfo> params;
  std::size_t offset = 0;
  for (const WorkloadLayer& l : w.layers) {
    if (l.params == 0) continue;
    params.push_back({l.name, nn::Shape{l.params}, offset, l.params, nn::ParamKind::weight});
    offset += l.params;
  }
  return nn::StepPlan(params, averaging);
}

StepResult simulate_step(const StepInputs& in) {
  const Workload& w = in.workload;
  const DeviceSpec& dev = in.device;
  const StepOptions& o = in.options;
  if (o.batch == 0) throw_parameter(ErrorKind::usage, "batch_size", "0: a step needs at least one sample per device");
  const double batch = static_cast<double>(o.batch);
  const double ab = activation_bytes(o.precision), wb = weight_bytes(o.precision);

  StepResult r;
  r.ranks = in.collectives != nullptr ? in.collectives->ranks() : 1;
  const std::size_t n = w.layers.size();
  r.layer_forward_s.assign(n, 0.0);
  r.layer_backward_s.assign(n, 0.0);
  std::vector<double> done_after(n, 0.0);  // backward: when layer i's gradients exist, from its start
  double t = 0;
  // A layer's own activation (WorkloadLayer::activation) on a GPU: the separate elementwise pass a
  // framework runs, reading and writing the output forward; reading the output's gradient and the
  // output, writing the gradient backward. On a CPU the calibrated rates include it.
  const bool separate_activation = dev.kind == "gpu";
  const auto activation_s = [&](const WorkloadLayer& l, double tensors) {
    if (!separate_activation || l.activation.empty()) return 0.0;
    return dev.layer_seconds(LayerKind::elementwise, batch * l.out_elems, tensors * batch * l.out_elems * ab, o.precision);
  };
  for (std::size_t i = 0; i < n; ++i) {
    const WorkloadLayer& l = w.layers[i];
    const double params = static_cast<double>(l.params);
    r.layer_forward_s[i] = dev.layer_seconds(l.kind, batch * l.forward_flops,
                                             batch * (l.in_elems + l.out_elems) * ab + params * wb, o.precision,
                                             gemm_shape(l, batch)) +
                           activation_s(l, 2);
    // With parameters: the weight gradient, and the input gradient unless this is the first layer.
    const double flops = l.params > 0 ? (i == 0 ? 1.0 : 2.0) * l.forward_flops : l.forward_flops;
    // Read the output's gradient, write the input's (the convention this machine's rates were
    // measured with, sim/cpu_rates.h); read the weights, write their gradient.
    const double bytes = batch * (l.in_elems + l.out_elems) * ab + 2.0 * params * wb;
    r.layer_backward_s[i] = dev.layer_seconds(l.kind, batch * flops, bytes, o.precision, gemm_shape(l, batch)) +
                            activation_s(l, 3);
  }
  // This machine's CPU: a run of layers the engine fuses (a convolution computing its pool in
  // cache, sim/cpu_rates.h) takes its measured time, shared among its layers as their own times
  // are, so that each still shows in the timeline.
  for (std::size_t i = 0; i < n;) {
    double per_sample = 0;
    const std::size_t length = dev.fused_run_at(w.layers, i, batch, per_sample);
    if (length == 0) {
      ++i;
      continue;
    }
    double separate = 0;
    for (std::size_t j = i; j < i + length; ++j) separate += r.layer_forward_s[j] + r.layer_backward_s[j];
    const double scale = separate > 0 ? per_sample * batch / separate : 1.0;
    for (std::size_t j = i; j < i + length; ++j) {
      r.layer_forward_s[j] *= scale;
      r.layer_backward_s[j] *= scale;
    }
    i += length;
  }
  for (std::size_t i = 0; i < n; ++i) r.parts.forward_s += r.layer_forward_s[i];
  for (std::size_t i = n; i-- > 0;) {
    t += r.layer_backward_s[i];
    done_after[i] = t;
  }
  const double backward_one = t;  // one backward pass: what the buckets are scheduled against
  // Accumulation: every pass but the last adds its forward and backward before the allreduce.
  const double passes = std::max(1, o.averaging.backward_passes_per_step);
  r.parts.forward_s *= passes;
  r.parts.backward_s = passes * backward_one;

  // The step plan's buckets on one communication stream, during the last backward pass.
  if (in.collectives != nullptr && r.ranks > 1) {
    const nn::StepPlan plan = workload_step_plan(w, o.averaging);
    const std::vector<std::size_t> layer_of = param_layers(w);
    // CPU ranks average as training does (train/engine_cpu.cpp): in place, with the gradients in
    // node memory unless they travel as float16, and one algorithm for every bucket, auto's
    // choice for the largest. On GPUs NCCL's model prices each bucket.
    const bool cpu = !in.collectives->on_gpus();
    const bool shared = cpu && !o.averaging.fp16_wire;
    std::string algorithm = o.algorithm;
    if (cpu && algorithm == "auto") {
      collectives::ChoiceQuery q{collectives::Collective::allreduce,
                                 static_cast<double>(plan.largest_count() * sizeof(float)), r.ranks};
      q.in_place = true;
      q.shared_buffers = shared;
      if (const std::string pick = in.collectives->choose(q); !pick.empty()) algorithm = pick;
    }
    double free_at = 0;
    for (std::size_t b = 0; b < plan.size(); ++b) {
      const nn::Bucket& bucket = plan.buckets()[b];
      BucketTiming bt;
      bt.index = b;
      bt.wire_bytes = static_cast<double>(plan.wire_bytes(bucket));
      bt.ready_s = done_after[layer_of[bucket.first_param]];
      bt.start_s = std::max(o.overlap ? bt.ready_s : backward_one, free_at);
      const model::Prediction x = in.collectives->predict(collectives::Collective::allreduce, algorithm, std::nullopt,
                                                          bt.wire_bytes, /*in_place=*/cpu, shared);
      if (!(x.time_s >= 0) || x.time_s == std::numeric_limits<double>::infinity()) {
        throw_parameter(ErrorKind::usage, "algorithm",
                        o.algorithm + ": the cost model has no price for it here (" + x.detail + "); use auto");
      }
      bt.seconds = x.time_s;
      bt.detail = x.detail;
      free_at = bt.start_s + bt.seconds;
      r.parts.allreduce_s += bt.seconds;
      r.buckets.push_back(bt);
    }
    r.parts.exposed_comm_s = std::max(0.0, free_at - backward_one);
  }

  // The optimizer streams over the parameters and its state once: an elementwise pass of that size.
  const double optimizer_bytes = static_cast<double>(w.parameters()) * o.optimizer_bytes_per_param;
  const double memory_Bps = dev.memory_Bps(LayerKind::elementwise, optimizer_bytes);
  r.parts.optimizer_s = memory_Bps > 0 ? optimizer_bytes / memory_Bps : 0.0;

  // The pipeline: decoding on the host's cores and the copy to the device overlap each other and,
  // with prefetch, the step.
  const double samples = passes * batch;  // per device per step
  const double decode = o.input.decode_per_core_per_s > 0
                            ? samples / (o.input.decode_per_core_per_s * std::max(o.input.cores, 1e-9))
                            : 0.0;
  const double in_elems = w.layers.empty() ? 0.0 : w.layers.front().in_elems;
  const double copy = o.input.host_to_device_GBps > 0 ? samples * in_elems * ab / (o.input.host_to_device_GBps * 1e9) : 0.0;
  r.parts.input_s = std::max(decode, copy);

  const double rest = r.parts.compute_s() + r.parts.exposed_comm_s + r.parts.optimizer_s;
  r.step_s = std::max(rest, r.parts.input_s);
  r.parts.pipeline_wait_s = std::max(0.0, r.parts.input_s - rest);
  r.samples_per_s = r.step_s > 0 ? r.ranks * samples / r.step_s : 0.0;
  r.bottleneck = bottleneck_words(in, r);
  return r;
}

MemoryEstimate training_memory(const Workload& w, std::size_t batch, Precision p, double optimizer_bytes_per_param) {
  const double params = static_cast<double>(w.parameters());
  MemoryEstimate m;
  // float32 weights (the master copy under amp, plus its float16 working copy).
  m.parameters = params * (p == Precision::amp ? 6.0 : 4.0);
  m.gradients = params * (p == Precision::amp ? 2.0 : 4.0);
  // The state an optimizer keeps is what it reads besides the weight and the gradient: a
  // 28-byte-per-parameter step (Adam) keeps two float32 moments, a 20-byte one (momentum) one.
  m.optimizer_state = params * std::max(0.0, (optimizer_bytes_per_param - 12.0) / 2.0);
  // Every layer's output is kept for backward except an elementwise layer's, which frameworks
  // compute in place (ReLU, dropout masks aside) or fuse into the layer before.
  double kept = 0;
  for (const WorkloadLayer& l : w.layers) {
    if (l.kind != LayerKind::elementwise) kept += l.out_elems;
  }
  m.activations = static_cast<double>(batch) * kept * activation_bytes(p);
  return m;
}

}  // namespace scalelab::sim
