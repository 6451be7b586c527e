// The CUDA kernels behind gpu/device_optimizer.h, as plain launch functions (each enqueues on
// `stream` and returns cudaGetLastError()), so that the optimizer's host logic stays in C++ and
// this interface carries no scalelab types. The formulas are lib/optim's, line for line.
//
// Segmented kernels (LARS, LAMB): the tensors are cut into blocks of at most
// kOptimizerBlockSpan floats, one DeviceSpan per CUDA block (a block never straddles two
// tensors); `first_block`/`block_count` give each tensor's blocks, `adapt` whether LARS/LAMB
// adapt it (weights, or everything without exclude_bias_and_norm), `partial` two doubles per
// block, `trust` one float per tensor.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>

namespace scalelab::gpu {

inline constexpr std::size_t kOptimizerBlockSpan = 8192;

struct DeviceSpan {
  unsigned tensor;
  std::size_t begin;  // floats into the flat buffers
  std::size_t end;
};

struct SegmentTables {
  const DeviceSpan* spans;
  unsigned blocks;
  const unsigned* first_block;
  const unsigned* block_count;
  const unsigned char* adapt;
  unsigned tensors;
  double* partial;
  float* trust;
};

// The scalars that change from step to step (the learning rate, the bias corrections, the first
// step's flag), computed on the host and read by the kernels from DEVICE memory, so that a
// captured CUDA graph of the step replays with the values of the step it runs:
// launch_set_step_scalars writes them (its arguments are taken at launch) on the stream before
// the kernels that read them.
struct StepScalars {
  float lr = 0.0f;
  float step_size = 0.0f, inv_sqrt_bc2 = 0.0f;  // adam: lr / (1 - beta1^t), 1 / sqrt(1 - beta2^t)
  float c1 = 0.0f, c2 = 0.0f;                   // lamb: 1 / (1 - beta1^t), 1 / (1 - beta2^t)
  int first_step = 0;                           // sgd with momentum: the buffer starts at the gradient
  // Set on the device after the host wrote the rest (0): the step's gradients overflowed under fp16
  // loss scaling (gpu/loss_scaler.h), and every kernel that would change the values or the state
  // returns at once.
  int skip = 0;
};
cudaError_t launch_set_step_scalars(StepScalars* dst, const StepScalars& value, cudaStream_t stream);

// sgd.cpp: momentum == 0 needs no buffer (buf may be null). Reads s->lr, s->first_step.
cudaError_t launch_sgd(float* p, const float* g, float* buf, std::size_t n, const StepScalars* s, float weight_decay,
                       float momentum, float dampening, bool nesterov, cudaStream_t stream);
// adam.cpp: reads s->step_size and s->inv_sqrt_bc2.
cudaError_t launch_adam(float* p, const float* g, float* m, float* v, std::size_t n, float beta1, float beta2, float eps,
                        float weight_decay, const StepScalars* s, cudaStream_t stream);
// lars.cpp: norms, trust ratios, update (three launches). Reads s->lr.
cudaError_t launch_lars(float* w, const float* g, float* velocity, const SegmentTables& t, const StepScalars* s,
                        float momentum, float weight_decay, float trust_coefficient, cudaStream_t stream);
// lamb.cpp: moments and norms, trust ratios, update (three launches). Reads s->lr, s->c1, s->c2.
cudaError_t launch_lamb(float* w, const float* g, float* m, float* v, const SegmentTables& t, const StepScalars* s,
                        float beta1, float beta2, float eps, float weight_decay, cudaStream_t stream);

}  // namespace scalelab::gpu
