// BatchNorm's kernels for the CUDA engine (gpu/device_batch_norm.h), NCHW activations of n
// samples, C channels and S = H*W positions per channel (S = 1 for BatchNorm1d inputs). The
// arithmetic follows nn::BatchNorm: per-channel sums in double, the biased variance
// E[x^2] - E[x]^2 (clamped at 0) for the normalisation, the unbiased one for the running
// variance, and the normalised input recomputed in float as (x - mean) * inv_std. Each function
// enqueues on `stream`, checks the launch and never synchronises.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>

namespace scalelab::gpu {

struct BnShape {
  std::size_t n = 0, channels = 0, spatial = 1;
};

// sums[c] += sum of x over channel c, sums[C + c] += sum of x^2 (double; zero them first).
void bn_channel_sums(const float* x, const BnShape& s, double* sums, cudaStream_t stream);

// Training: from sums (2C) over `count` elements per channel, mean[c] and inv_std[c] of this
// batch, and the running statistics moved by momentum (PyTorch's update, unbiased variance).
void bn_batch_statistics(const double* sums, double count, std::size_t channels, float momentum, float eps,
                         float* running_mean, float* running_var, float* mean, float* inv_std, cudaStream_t stream);
// Evaluation: mean and inv_std from the running statistics.
void bn_running_statistics(const float* running_mean, const float* running_var, std::size_t channels, float eps,
                           float* mean, float* inv_std, cudaStream_t stream);

// y = gamma * (x - mean) * inv_std + beta, then + residual[i] when residual is not null, then
// ReLU when relu (the residual block's "bn2 + shortcut, ReLU" and "bn1, ReLU" fused).
void bn_apply(const float* x, float* y, const float* mean, const float* inv_std, const float* gamma,
              const float* beta, const float* residual, bool relu, const BnShape& s, cudaStream_t stream);

// sums[c] += sum of dy, sums[C + c] += sum of dy * xhat over channel c (double; zero them first).
void bn_gradient_sums(const float* dy, const float* x, const float* mean, const float* inv_std, const BnShape& s,
                      double* sums, cudaStream_t stream);
// dbeta[c] += sums[c], dgamma[c] += sums[C + c] (the local sums, as nn::BatchNorm accumulates).
void bn_parameter_gradients(const double* sums, std::size_t channels, float* dgamma, float* dbeta,
                            cudaStream_t stream);
// dx = gamma * inv_std * (dy - sums[c] / count - xhat * sums[C + c] / count) in training,
// dx = gamma * inv_std * dy in evaluation (the statistics are then constants).
void bn_input_gradient(const float* dy, const float* x, const float* mean, const float* inv_std, const float* gamma,
                       const double* sums, double count, bool training, const BnShape& s, float* dx,
                       cudaStream_t stream);

// SyncBatchNorm (nn::BatchNorm's statistics reducer, on the device): the local sums packed as the
// CPU layer hands them to its reducer, in float, `with_count` adding the element count at [2C]:
// forward [sum x (C), sum x^2 (C), count], backward [sum dy (C), sum dy*xhat (C)]. After the sums
// are replaced by their totals over the ranks (an allreduce), the _reduced variants use them:
// the count is read from device memory (`count_at`, the forward's reduced [2C]).
void bn_pack_sums(const double* sums, std::size_t channels, double count, bool with_count, float* packed,
                  cudaStream_t stream);
void bn_batch_statistics_reduced(const float* reduced, std::size_t channels, float momentum, float eps,
                                 float* running_mean, float* running_var, float* mean, float* inv_std,
                                 cudaStream_t stream);
void bn_input_gradient_reduced(const float* dy, const float* x, const float* mean, const float* inv_std,
                               const float* gamma, const float* reduced, const float* count_at, const BnShape& s,
                               float* dx, cudaStream_t stream);

}  // namespace scalelab::gpu
