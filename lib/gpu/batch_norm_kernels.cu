// BatchNorm's kernels (gpu/batch_norm_kernels.h). Channel sums: block (c, k) of a C x splits grid
// walks channel c's n*S elements with stride splits*threads, sums in double, reduces in shared
// memory and adds its partial to the channel's total with a double atomicAdd (so the order of the
// partials, and the last bits of a sum, vary between runs; the CPU's loop sums in one order).
// Elementwise kernels: one thread per element, grid-stride loops.
#include "gpu/batch_norm_kernels.h"

#include <algorithm>
#include <string>

#include "gpu/kernel_launch.cuh"

namespace scalelab::gpu {
namespace {

using kernels::blocks_for;
using kernels::check_launch;
using kernels::kThreads;
constexpr std::size_t kTargetBlocks = 1024;  // enough to fill the SMs of any current GPU

// The grid of a per-channel reduction: C blocks across, enough down to fill the GPU.
dim3 reduction_grid(const BnShape& s) {
  const std::size_t per_channel = s.n * s.spatial;
  const std::size_t most = std::max<std::size_t>((per_channel + kThreads - 1) / kThreads, 1);
  const std::size_t splits = std::clamp<std::size_t>(kTargetBlocks / std::max<std::size_t>(s.channels, 1), 1, most);
  return dim3(static_cast<unsigned>(s.channels), static_cast<unsigned>(std::min<std::size_t>(splits, 65535)));
}

__global__ void channel_sums_kernel(const float* x, std::size_t n, std::size_t channels, std::size_t spatial,
                                    double* sums) {
  const std::size_t c = blockIdx.x, total = n * spatial;
  double s1 = 0, s2 = 0;
  for (std::size_t k = blockIdx.y * std::size_t{blockDim.x} + threadIdx.x; k < total;
       k += std::size_t{gridDim.y} * blockDim.x) {
    const std::size_t sample = k / spatial, pos = k - sample * spatial;
    const double v = x[(sample * channels + c) * spatial + pos];
    s1 += v;
    s2 += v * v;
  }
  kernels::block_add_pair(s1, s2, sums + c, sums + channels + c);
}

__global__ void gradient_sums_kernel(const float* dy, const float* x, const float* mean, const float* inv_std,
                                     std::size_t n, std::size_t channels, std::size_t spatial, double* sums) {
  const std::size_t c = blockIdx.x, total = n * spatial;
  const float m = mean[c], is = inv_std[c];
  double s1 = 0, s2 = 0;
  for (std::size_t k = blockIdx.y * std::size_t{blockDim.x} + threadIdx.x; k < total;
       k += std::size_t{gridDim.y} * blockDim.x) {
    const std::size_t sample = k / spatial, pos = k - sample * spatial;
    const std::size_t at = (sample * channels + c) * spatial + pos;
    const float xhat = (x[at] - m) * is;
    s1 += dy[at];
    s2 += double(dy[at]) * xhat;
  }
  kernels::block_add_pair(s1, s2, sums + c, sums + channels + c);
}

// Sum: double (this rank's sums) or float (sums reduced over the ranks, as the CPU's reducer
// returns them). The count is count_at[0] when count_at is not null.
template <class Sum>
__global__ void batch_statistics_kernel(const Sum* sums, const float* count_at, double count, std::size_t channels,
                                        float momentum, float eps, float* running_mean, float* running_var,
                                        float* mean, float* inv_std) {
  const std::size_t c = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x;
  if (c >= channels) return;
  if (count_at != nullptr) count = count_at[0];
  const double m = double(sums[c]) / count;
  const double var = fmax(double(sums[channels + c]) / count - m * m, 0.0);
  inv_std[c] = static_cast<float>(1.0 / sqrt(var + eps));
  mean[c] = static_cast<float>(m);
  const double unbiased = count > 1 ? var * count / (count - 1) : var;
  running_mean[c] = static_cast<float>((1 - momentum) * running_mean[c] + momentum * m);
  running_var[c] = static_cast<float>((1 - momentum) * running_var[c] + momentum * unbiased);
}

__global__ void pack_sums_kernel(const double* sums, std::size_t channels, double count, bool with_count,
                                 float* packed) {
  const std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x;
  if (i < 2 * channels) packed[i] = static_cast<float>(sums[i]);
  if (with_count && i == 2 * channels) packed[i] = static_cast<float>(count);
}

__global__ void running_statistics_kernel(const float* running_mean, const float* running_var, std::size_t channels,
                                          float eps, float* mean, float* inv_std) {
  const std::size_t c = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x;
  if (c >= channels) return;
  mean[c] = running_mean[c];
  inv_std[c] = 1.0f / sqrtf(running_var[c] + eps);
}

__global__ void apply_kernel(const float* x, float* y, const float* mean, const float* inv_std, const float* gamma,
                             const float* beta, const float* residual, bool relu, std::size_t total,
                             std::size_t channels, std::size_t spatial) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < total;
       i += std::size_t{gridDim.x} * blockDim.x) {
    const std::size_t c = (i / spatial) % channels;
    float v = gamma[c] * ((x[i] - mean[c]) * inv_std[c]) + beta[c];
    if (residual != nullptr) v += residual[i];
    y[i] = relu ? fmaxf(v, 0.0f) : v;
  }
}

__global__ void parameter_gradients_kernel(const double* sums, std::size_t channels, float* dgamma, float* dbeta) {
  const std::size_t c = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x;
  if (c >= channels) return;
  dbeta[c] += static_cast<float>(sums[c]);
  dgamma[c] += static_cast<float>(sums[channels + c]);
}

template <class Sum>
__global__ void input_gradient_kernel(const float* dy, const float* x, const float* mean, const float* inv_std,
                                      const float* gamma, const Sum* sums, const float* count_at, double count,
                                      bool training, std::size_t total, std::size_t channels, std::size_t spatial,
                                      float* dx) {
  if (count_at != nullptr) count = count_at[0];
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < total;
       i += std::size_t{gridDim.x} * blockDim.x) {
    const std::size_t c = (i / spatial) % channels;
    const float k = gamma[c] * inv_std[c];
    if (!training) {
      dx[i] = k * dy[i];
      continue;
    }
    const float md = static_cast<float>(double(sums[c]) / count);
    const float mdx = static_cast<float>(double(sums[channels + c]) / count);
    const float xhat = (x[i] - mean[c]) * inv_std[c];
    dx[i] = k * (dy[i] - md - xhat * mdx);
  }
}

int channel_blocks(std::size_t channels) { return static_cast<int>((channels + kThreads - 1) / kThreads); }

}  // namespace

void bn_channel_sums(const float* x, const BnShape& s, double* sums, cudaStream_t stream) {
  channel_sums_kernel<<<reduction_grid(s), kThreads, 0, stream>>>(x, s.n, s.channels, s.spatial, sums);
  check_launch("the BatchNorm channel sums");
}

void bn_batch_statistics(const double* sums, double count, std::size_t channels, float momentum, float eps,
                         float* running_mean, float* running_var, float* mean, float* inv_std, cudaStream_t stream) {
  batch_statistics_kernel<double><<<channel_blocks(channels), kThreads, 0, stream>>>(
      sums, nullptr, count, channels, momentum, eps, running_mean, running_var, mean, inv_std);
  check_launch("the BatchNorm batch statistics");
}

void bn_running_statistics(const float* running_mean, const float* running_var, std::size_t channels, float eps,
                           float* mean, float* inv_std, cudaStream_t stream) {
  running_statistics_kernel<<<channel_blocks(channels), kThreads, 0, stream>>>(running_mean, running_var, channels,
                                                                               eps, mean, inv_std);
  check_launch("the BatchNorm running statistics");
}

void bn_apply(const float* x, float* y, const float* mean, const float* inv_std, const float* gamma,
              const float* beta, const float* residual, bool relu, const BnShape& s, cudaStream_t stream) {
  const std::size_t total = s.n * s.channels * s.spatial;
  apply_kernel<<<blocks_for(total), kThreads, 0, stream>>>(x, y, mean, inv_std, gamma, beta, residual, relu, total,
                                                           s.channels, s.spatial);
  check_launch("the BatchNorm normalisation");
}

void bn_gradient_sums(const float* dy, const float* x, const float* mean, const float* inv_std, const BnShape& s,
                      double* sums, cudaStream_t stream) {
  gradient_sums_kernel<<<reduction_grid(s), kThreads, 0, stream>>>(dy, x, mean, inv_std, s.n, s.channels, s.spatial,
                                                                   sums);
  check_launch("the BatchNorm gradient sums");
}

void bn_parameter_gradients(const double* sums, std::size_t channels, float* dgamma, float* dbeta,
                            cudaStream_t stream) {
  parameter_gradients_kernel<<<channel_blocks(channels), kThreads, 0, stream>>>(sums, channels, dgamma, dbeta);
  check_launch("the BatchNorm parameter gradients");
}

void bn_input_gradient(const float* dy, const float* x, const float* mean, const float* inv_std, const float* gamma,
                       const double* sums, double count, bool training, const BnShape& s, float* dx,
                       cudaStream_t stream) {
  const std::size_t total = s.n * s.channels * s.spatial;
  input_gradient_kernel<double><<<blocks_for(total), kThreads, 0, stream>>>(
      dy, x, mean, inv_std, gamma, sums, nullptr, count, training, total, s.channels, s.spatial, dx);
  check_launch("the BatchNorm input gradient");
}

void bn_pack_sums(const double* sums, std::size_t channels, double count, bool with_count, float* packed,
                  cudaStream_t stream) {
  pack_sums_kernel<<<channel_blocks(2 * channels + 1), kThreads, 0, stream>>>(sums, channels, count, with_count, packed);
  check_launch("the BatchNorm statistics packing");
}

void bn_batch_statistics_reduced(const float* reduced, std::size_t channels, float momentum, float eps,
                                 float* running_mean, float* running_var, float* mean, float* inv_std,
                                 cudaStream_t stream) {
  batch_statistics_kernel<float><<<channel_blocks(channels), kThreads, 0, stream>>>(
      reduced, reduced + 2 * channels, 0.0, channels, momentum, eps, running_mean, running_var, mean, inv_std);
  check_launch("the synchronised BatchNorm statistics");
}

void bn_input_gradient_reduced(const float* dy, const float* x, const float* mean, const float* inv_std,
                               const float* gamma, const float* reduced, const float* count_at, const BnShape& s,
                               float* dx, cudaStream_t stream) {
  const std::size_t total = s.n * s.channels * s.spatial;
  input_gradient_kernel<float><<<blocks_for(total), kThreads, 0, stream>>>(
      dy, x, mean, inv_std, gamma, reduced, count_at, 0.0, true, total, s.channels, s.spatial, dx);
  check_launch("the synchronised BatchNorm input gradient");
}

}  // namespace scalelab::gpu
