// DeviceOptimizer: the optimizers of lib/optim (sgd, adam, lars, lamb) applied on the GPU to flat
// device buffers of values and gradients laid out as an nn::ParameterSet (same offsets, sizes and
// kinds). Same names, same OptimizerOptions, same checks (it asks optim::make_optimizer to
// validate them) and the same float32 formulas, so a step here equals the CPU step up to
// rounding of the per-tensor norms.
//
// The state (momenta, moments) lives in ONE flat device buffer laid out exactly as the CPU
// optimizer's state() (same segments, same order), so the trainer moves it to and from a host
// optim::Optimizer for the rank-0 broadcast and for checkpoints (copy_state_to/copy_state_from),
// step count included. LARS and LAMB compute their per-tensor norms on the device with one
// segmented reduction over every tensor (a fixed-order two-pass sum in double: every rank gets
// bit-identical trust ratios), without a host round trip.
//
// Allocation happens in the constructor (after every check), except the few bytes of the per-step
// scalars, allocated at the first step; step() otherwise only launches kernels on `stream`. The
// per-step scalars reach the kernels through device memory (prepare/apply below).
//
//   gpu::DeviceOptimizer opt("adam", options, params);   // params: the finalized layout
//   opt.step(d_values, d_grads, lr, stream);             // enqueued; does not synchronise
//   opt.copy_state_to(host_optimizer);                   // for a checkpoint (synchronises)
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "gpu/device_buffer.h"
#include "gpu/device_optimizer_kernels.h"
#include "nn/parameter.h"
#include "optim/optimizer.h"

namespace scalelab::gpu {

// How LARS/LAMB's segmented reduction cuts the tensors into CUDA blocks: block b covers
// spans[b] (at most kOptimizerBlockSpan floats of one tensor), tensor t owns blocks
// [first_block[t], first_block[t] + block_count[t]). Host logic, tested without a GPU.
struct SegmentLayout {
  std::vector<DeviceSpan> spans;
  std::vector<unsigned> first_block;
  std::vector<unsigned> block_count;
};
[[nodiscard]] SegmentLayout segment_layout(const std::vector<nn::ParamInfo>& params);

class DeviceOptimizer {
 public:
  // Throws usage for an unknown name or bad options (the CPU optimizer's messages), runtime for a
  // CUDA failure. `layout` must be finalized; only its metadata is read (not its host buffers).
  DeviceOptimizer(const std::string& name, const optim::OptimizerOptions& options, const nn::ParameterSet& layout);
  ~DeviceOptimizer();
  DeviceOptimizer(const DeviceOptimizer&) = delete;
  DeviceOptimizer& operator=(const DeviceOptimizer&) = delete;

  [[nodiscard]] const std::string& name() const { return name_; }
  [[nodiscard]] const optim::OptimizerOptions& options() const { return options_; }

  // One optimizer step on device buffers of layout.size() floats each, enqueued on `stream`:
  // prepare(lr) then apply(). Throws usage if lr is not a positive finite number (as the CPU
  // optimizers do).
  void step(float* values, const float* grads, float lr, cudaStream_t stream);
  // The step in two parts, for a captured CUDA graph: prepare() counts the step and writes its
  // scalars (learning rate, bias corrections) to device memory on `stream`; apply() enqueues the
  // kernels, which read them there. A graph captured from apply() replays correctly after each
  // step's prepare() on the stream it is launched on.
  void prepare(float lr, cudaStream_t stream);
  void apply(float* values, const float* grads, cudaStream_t stream);
  // Device memory of this step's skip flag (StepScalars::skip), 0 once prepare() has run on the
  // stream: fp16's loss scaling sets it before apply() when the gradients overflowed, and apply()'s
  // kernels then change nothing. Valid after the first prepare().
  [[nodiscard]] int* skip_flag();

  // The flat device state: segments() as the CPU optimizer names and places them.
  [[nodiscard]] float* state() { return state_; }
  [[nodiscard]] std::size_t state_size() const { return state_size_; }  // floats
  [[nodiscard]] const std::vector<optim::StateSegment>& segments() const { return segments_; }
  [[nodiscard]] std::int64_t step_count() const { return steps_; }
  void set_step_count(std::int64_t n) { steps_ = n; }

  // Host <-> device copies of the state (synchronous; `host` must hold state_size() floats).
  void download_state(std::span<float> host) const;
  void upload_state(std::span<const float> host);
  // The same, through a host optimizer of the same name bound to the same layout (state and step
  // count): how the trainer broadcasts rank 0's state and writes or restores checkpoints.
  void copy_state_to(optim::Optimizer& host) const;
  void copy_state_from(const optim::Optimizer& host);

  // LARS/LAMB: the trust ratio of every tensor at the last step (synchronous copy; 1 for the
  // others), for diagnostics and tests.
  [[nodiscard]] std::vector<float> trust_ratios() const;

 private:
  struct Tables;  // device-side tensor and block tables of the segmented reduction
  void build_tables(const nn::ParameterSet& layout);
  std::string name_;
  optim::OptimizerOptions options_;
  std::size_t size_ = 0;        // floats in the parameter buffer
  std::size_t tensors_ = 0;     // parameter tensors
  std::vector<optim::StateSegment> segments_;
  std::size_t state_size_ = 0;
  float* state_ = nullptr;      // device
  std::int64_t steps_ = 0;
  DeviceBuffer<StepScalars> scalars_;  // this step's, written by prepare() (allocated by the first)
  std::unique_ptr<Tables> tables_;  // LARS/LAMB only
};

}  // namespace scalelab::gpu
