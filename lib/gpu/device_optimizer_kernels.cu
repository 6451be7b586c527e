// The optimizer kernels (gpu/device_optimizer_kernels.h), written after lib/optim's CPU loops
// (sgd.cpp, adam.cpp, lars.cpp, lamb.cpp) so that a reader can hold the two side by side.
//
// SGD and Adam are one elementwise grid-stride kernel over the whole buffer (padding between
// tensors included, as on the CPU). LARS and LAMB need a norm per tensor: one launch sums each
// block's squares in double into partial[], one thread per tensor then adds its blocks' partials
// in block order and writes the trust ratio, one launch applies the update. Fixed summation
// order everywhere: every rank computes the same bits, so replicas never drift apart.
#include "gpu/device_optimizer_kernels.h"

#include <algorithm>

namespace scalelab::gpu {
namespace {

constexpr unsigned kThreads = 256;  // a power of two: the block reduction halves it
constexpr std::size_t kMaxElementwiseBlocks = 4096;

unsigned elementwise_blocks(std::size_t n) {
  return static_cast<unsigned>(std::clamp<std::size_t>((n + kThreads - 1) / kThreads, 1, kMaxElementwiseBlocks));
}
unsigned tensor_blocks(unsigned tensors) { return std::max(1u, (tensors + kThreads - 1) / kThreads); }

__device__ std::size_t first_index() { return blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; }
__device__ std::size_t grid_stride() { return std::size_t{gridDim.x} * blockDim.x; }

// ---- SGD (sgd.cpp) ---------------------------------------------------------------------------
__global__ void set_step_scalars_kernel(StepScalars* dst, StepScalars value) { *dst = value; }

__global__ void sgd_plain_kernel(float* p, const float* g, std::size_t n, const StepScalars* s, float wd) {
  if (s->skip != 0) return;
  const float lr = s->lr;
  for (std::size_t i = first_index(); i < n; i += grid_stride()) p[i] -= lr * (g[i] + wd * p[i]);
}

__global__ void sgd_momentum_kernel(float* p, const float* g, float* buf, std::size_t n, const StepScalars* s, float wd,
                                    float mu, float damp, bool nesterov) {
  if (s->skip != 0) return;
  const float lr = s->lr;
  const bool first = s->first_step != 0;
  for (std::size_t i = first_index(); i < n; i += grid_stride()) {
    const float gi = g[i] + wd * p[i];
    const float b = first ? gi : mu * buf[i] + damp * gi;
    buf[i] = b;
    p[i] -= lr * (nesterov ? gi + mu * b : b);
  }
}

// ---- Adam (adam.cpp) -------------------------------------------------------------------------
__global__ void adam_kernel(float* p, const float* g, float* m, float* v, std::size_t n, float b1, float b2, float eps,
                            float wd, const StepScalars* s) {
  if (s->skip != 0) return;
  const float step_size = s->step_size, inv_sqrt_bc2 = s->inv_sqrt_bc2;
  for (std::size_t i = first_index(); i < n; i += grid_stride()) {
    const float gi = g[i] + wd * p[i];
    const float mi = b1 * m[i] + (1.0f - b1) * gi;
    const float vi = b2 * v[i] + (1.0f - b2) * gi * gi;
    m[i] = mi;
    v[i] = vi;
    p[i] -= step_size * mi / (sqrtf(vi) * inv_sqrt_bc2 + eps);
  }
}

// Sums a and b over the block into partial[2 * blockIdx.x] and [+1] with a fixed tree.
__device__ void block_sum2(double a, double b, double* partial) {
  __shared__ double sa[kThreads];
  __shared__ double sb[kThreads];
  sa[threadIdx.x] = a;
  sb[threadIdx.x] = b;
  __syncthreads();
  for (unsigned half = kThreads / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) {
      sa[threadIdx.x] += sa[threadIdx.x + half];
      sb[threadIdx.x] += sb[threadIdx.x + half];
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    partial[2 * blockIdx.x] = sa[0];
    partial[2 * blockIdx.x + 1] = sb[0];
  }
}

// The two sums of tensor t: its blocks' partials added in block order.
__device__ void tensor_sums(const SegmentTables& s, unsigned t, double* a, double* b) {
  double x = 0.0, y = 0.0;
  for (unsigned k = s.first_block[t]; k < s.first_block[t] + s.block_count[t]; ++k) {
    x += s.partial[2 * k];
    y += s.partial[2 * k + 1];
  }
  *a = x;
  *b = y;
}

// ---- LARS (lars.cpp) -------------------------------------------------------------------------
// partial = (sum w^2, sum g^2) over each block of an adapted tensor.
__global__ void lars_norms_kernel(const float* w, const float* g, SegmentTables s) {
  const DeviceSpan sp = s.spans[blockIdx.x];
  double ww = 0.0, gg = 0.0;
  if (s.adapt[sp.tensor]) {
    for (std::size_t i = sp.begin + threadIdx.x; i < sp.end; i += kThreads) {
      ww += double(w[i]) * double(w[i]);
      gg += double(g[i]) * double(g[i]);
    }
  }
  block_sum2(ww, gg, s.partial);
}

// One thread per tensor: trust = eta * |w| / (|g| + wd * |w|) where both norms are positive.
__global__ void lars_trust_kernel(SegmentTables s, float eta, float wd) {
  const unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= s.tensors) return;
  float trust = 1.0f;
  if (s.adapt[t]) {
    double w2 = 0.0, g2 = 0.0;
    tensor_sums(s, t, &w2, &g2);
    const double wn = sqrt(w2), gn = sqrt(g2);
    if (wn > 0.0 && gn > 0.0) trust = float(eta * wn / (gn + wd * wn));
  }
  s.trust[t] = trust;
}

__global__ void lars_apply_kernel(float* w, const float* g, float* velocity, SegmentTables s, const StepScalars* sc,
                                  float mu, float weight_decay) {
  if (sc->skip != 0) return;
  const DeviceSpan sp = s.spans[blockIdx.x];
  const float wd = s.adapt[sp.tensor] ? weight_decay : 0.0f;
  const float scaled = sc->lr * s.trust[sp.tensor];
  for (std::size_t i = sp.begin + threadIdx.x; i < sp.end; i += kThreads) {
    velocity[i] = mu * velocity[i] + scaled * (g[i] + wd * w[i]);
    w[i] -= velocity[i];
  }
}

// ---- LAMB (lamb.cpp) -------------------------------------------------------------------------
struct LambConstants {
  float b1, b2, eps, weight_decay;
};

__device__ float lamb_direction(float m, float v, float w, float wd, const LambConstants& k, float c1, float c2) {
  return (m * c1) / (sqrtf(v * c2) + k.eps) + wd * w;
}

// Pass 1: the moments, and partial = (sum w^2, sum r^2) over each block.
__global__ void lamb_moments_kernel(const float* w, const float* g, float* m, float* v, SegmentTables s,
                                    LambConstants k, const StepScalars* sc) {
  if (sc->skip != 0) return;
  const DeviceSpan sp = s.spans[blockIdx.x];
  const float c1 = sc->c1, c2 = sc->c2;
  const float wd = s.adapt[sp.tensor] ? k.weight_decay : 0.0f;
  double ww = 0.0, rr = 0.0;
  for (std::size_t i = sp.begin + threadIdx.x; i < sp.end; i += kThreads) {
    m[i] = k.b1 * m[i] + (1.0f - k.b1) * g[i];
    v[i] = k.b2 * v[i] + (1.0f - k.b2) * g[i] * g[i];
    const float r = lamb_direction(m[i], v[i], w[i], wd, k, c1, c2);
    ww += double(w[i]) * double(w[i]);
    rr += double(r) * double(r);
  }
  block_sum2(ww, rr, s.partial);
}

__global__ void lamb_trust_kernel(SegmentTables s) {
  const unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= s.tensors) return;
  double w2 = 0.0, r2 = 0.0;
  tensor_sums(s, t, &w2, &r2);
  s.trust[t] = (s.adapt[t] && w2 > 0.0 && r2 > 0.0) ? float(sqrt(w2 / r2)) : 1.0f;
}

// Pass 2: the same direction from the updated moments, applied.
__global__ void lamb_apply_kernel(float* w, const float* m, const float* v, SegmentTables s, LambConstants k,
                                  const StepScalars* sc) {
  if (sc->skip != 0) return;
  const DeviceSpan sp = s.spans[blockIdx.x];
  const float wd = s.adapt[sp.tensor] ? k.weight_decay : 0.0f;
  const float scaled = sc->lr * s.trust[sp.tensor], c1 = sc->c1, c2 = sc->c2;
  for (std::size_t i = sp.begin + threadIdx.x; i < sp.end; i += kThreads)
    w[i] -= scaled * lamb_direction(m[i], v[i], w[i], wd, k, c1, c2);
}

}  // namespace

cudaError_t launch_set_step_scalars(StepScalars* dst, const StepScalars& value, cudaStream_t stream) {
  set_step_scalars_kernel<<<1, 1, 0, stream>>>(dst, value);
  return cudaGetLastError();
}

cudaError_t launch_sgd(float* p, const float* g, float* buf, std::size_t n, const StepScalars* s, float weight_decay,
                       float momentum, float dampening, bool nesterov, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  if (momentum == 0.0f) {
    sgd_plain_kernel<<<elementwise_blocks(n), kThreads, 0, stream>>>(p, g, n, s, weight_decay);
  } else {
    sgd_momentum_kernel<<<elementwise_blocks(n), kThreads, 0, stream>>>(p, g, buf, n, s, weight_decay, momentum,
                                                                        1.0f - dampening, nesterov);
  }
  return cudaGetLastError();
}

cudaError_t launch_adam(float* p, const float* g, float* m, float* v, std::size_t n, float beta1, float beta2, float eps,
                        float weight_decay, const StepScalars* s, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  adam_kernel<<<elementwise_blocks(n), kThreads, 0, stream>>>(p, g, m, v, n, beta1, beta2, eps, weight_decay, s);
  return cudaGetLastError();
}

cudaError_t launch_lars(float* w, const float* g, float* velocity, const SegmentTables& t, const StepScalars* s,
                        float momentum, float weight_decay, float trust_coefficient, cudaStream_t stream) {
  if (t.blocks == 0) return cudaSuccess;
  lars_norms_kernel<<<t.blocks, kThreads, 0, stream>>>(w, g, t);
  lars_trust_kernel<<<tensor_blocks(t.tensors), kThreads, 0, stream>>>(t, trust_coefficient, weight_decay);
  lars_apply_kernel<<<t.blocks, kThreads, 0, stream>>>(w, g, velocity, t, s, momentum, weight_decay);
  return cudaGetLastError();
}

cudaError_t launch_lamb(float* w, const float* g, float* m, float* v, const SegmentTables& t, const StepScalars* s,
                        float beta1, float beta2, float eps, float weight_decay, cudaStream_t stream) {
  if (t.blocks == 0) return cudaSuccess;
  const LambConstants k{beta1, beta2, eps, weight_decay};
  lamb_moments_kernel<<<t.blocks, kThreads, 0, stream>>>(w, g, m, v, t, k, s);
  lamb_trust_kernel<<<tensor_blocks(t.tensors), kThreads, 0, stream>>>(t);
  lamb_apply_kernel<<<t.blocks, kThreads, 0, stream>>>(w, m, v, t, k, s);
  return cudaGetLastError();
}

}  // namespace scalelab::gpu
