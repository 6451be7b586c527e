// The step model: one data-parallel training step of a workload on one device per rank, priced
// layer by layer and overlapped the way the executors overlap it.
//
//   forward      every layer in order: roofline time (sim/device.h) of its FLOPs and the bytes it
//                reads and writes (activations in the precision, weights);
//   backward     every layer in reverse: twice the forward FLOPs for layers with parameters (the
//                input and the weight gradients; the first layer computes only the latter), the
//                forward FLOPs otherwise;
//   allreduce    the step plan's buckets (nn/step_plan.h: the executors' own plan), each priced
//                by the collective cost model (model/predict.h) at its wire bytes, started when
//                backward has produced its last gradient (or after backward, where the engine
//                does not overlap: the CPU engine), one at a time on one communication stream;
//   optimizer    reads and writes every parameter and its state at the device's memory speed;
//   input        the pipeline (decode and augmentation on the host's cores, then the copy to the
//                device) runs ahead with prefetch, so it costs only what it exceeds the rest by.
//
//   step = max(input, forward + backward + exposed allreduce + optimizer)
//
// With k backward passes per step (accumulation) forward and backward run k times, the buckets
// during the last backward, and a step handles k batches.
//
// docs/simulator.md writes each formula once, with what it leaves out.
//
//   StepInputs in{workload, device, &predictor, options};
//   StepResult r = simulate_step(in);   // r.step_s, r.parts, r.buckets, r.bottleneck
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "model/predict.h"
#include "nn/step_plan.h"
#include "sim/device.h"
#include "sim/workload.h"

namespace scalelab::sim {

// The host side of the input pipeline, per device.
struct InputPipeline {
  double decode_per_core_per_s = 0;  // samples one core decodes and augments per second; 0: no decoding
  double cores = 1;                  // host cores working for each device
  double host_to_device_GBps = 0;    // the copy of each batch to the device; 0: no copy (CPU ranks)
};

struct StepOptions {
  std::size_t batch = 32;                  // samples per device per step
  Precision precision = Precision::fp32;
  nn::AveragingOptions averaging;          // bucket cap, wire precision, backward passes per step
  // The allreduce as model::Predictor names it. On CPU ranks priced as training runs it: in place,
  // on gradients in node memory unless float16 travels, and "auto" chosen once, for the largest bucket.
  std::string algorithm = "auto";
  bool overlap = true;                     // buckets start during backward (DDP, Horovod, the CUDA engine)
  double optimizer_bytes_per_param = 28;   // Adam: read w, g, m, v; write w, m, v (float32)
  InputPipeline input;
};

struct StepInputs {
  const Workload& workload;
  const DeviceSpec& device;
  const model::Predictor* collectives = nullptr;  // null or one rank: no allreduce
  StepOptions options;
};

struct BucketTiming {
  std::size_t index = 0;
  double wire_bytes = 0;
  double ready_s = 0;   // from the start of the (last) backward pass: its last gradient exists
  double start_s = 0;   // from the start of the (last) backward pass
  double seconds = 0;   // the allreduce alone
  std::string detail;   // how the cost model priced it ("NCCL ring, Simple")
};

struct StepParts {
  double forward_s = 0;
  double backward_s = 0;
  double allreduce_s = 0;       // every bucket's allreduce, added up
  double exposed_comm_s = 0;    // the part of it after backward ends
  double optimizer_s = 0;
  double input_s = 0;           // the pipeline's time per step (decode + copy), hidden by prefetch when shorter
  double pipeline_wait_s = 0;   // what the step waits for the pipeline: max(0, input - the rest)
  [[nodiscard]] double compute_s() const { return forward_s + backward_s; }
};

struct StepResult {
  double step_s = 0;
  double samples_per_s = 0;  // all devices together
  int ranks = 1;
  StepParts parts;
  std::vector<BucketTiming> buckets;
  std::vector<double> layer_forward_s;   // per workload layer
  std::vector<double> layer_backward_s;
  std::string bottleneck;                // in words, with its share of the step
};

// The step plan of a workload: one tensor per layer with parameters, in layer order.
[[nodiscard]] nn::StepPlan workload_step_plan(const Workload& w, const nn::AveragingOptions& averaging);

[[nodiscard]] StepResult simulate_step(const StepInputs& in);

// Bytes a device holds to train the workload at `batch` per device: parameters, gradients,
// optimizer state (and float32 master weights under amp), and the activations kept for backward
// (every layer's output but the elementwise layers', which run in place).
struct MemoryEstimate {
  double parameters = 0, gradients = 0, optimizer_state = 0, activations = 0;
  [[nodiscard]] double total() const { return parameters + gradients + optimizer_state + activations; }
};
[[nodiscard]] MemoryEstimate training_memory(const Workload& w, std::size_t batch, Precision p,
                                             double optimizer_bytes_per_param);

}  // namespace scalelab::sim
