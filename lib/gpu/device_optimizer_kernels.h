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

// sgd.cpp: momentum == 0 needs no buffer (buf may be null).
cudaError_t launch_sgd(float* p, const float* g, float* buf, std::size_t n, float lr, float weight_decay, float momentum,
                       float dampening, bool first_step, bool nesterov, cudaStream_t stream);
// adam.cpp: step_size = lr / (1 - beta1^t), inv_sqrt_bc2 = 1 / sqrt(1 - beta2^t), from the host.
cudaError_t launch_adam(float* p, const float* g, float* m, float* v, std::size_t n, float beta1, float beta2, float eps,
                        float weight_decay, float step_size, float inv_sqrt_bc2, cudaStream_t stream);
// lars.cpp: norms, trust ratios, update (three launches).
cudaError_t launch_lars(float* w, const float* g, float* velocity, const SegmentTables& t, float lr, float momentum,
                        float weight_decay, float trust_coefficient, cudaStream_t stream);
// lamb.cpp: c1 = 1 / (1 - beta1^t), c2 = 1 / (1 - beta2^t) from the host; moments and norms,
// trust ratios, update (three launches).
cudaError_t launch_lamb(float* w, const float* g, float* m, float* v, const SegmentTables& t, float lr, float beta1,
                        float beta2, float c1, float c2, float eps, float weight_decay, cudaStream_t stream);

}  // namespace scalelab::gpu
