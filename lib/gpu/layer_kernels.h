// The CUDA engine's own kernels, for what cuBLAS and cuDNN do not do (gpu/device_layers.h):
// bias + activation epilogues, ReLU's backward mask, max and global average pooling, dropout, and softmax
// cross-entropy with the loss and correct count summed on the device. Each function enqueues on
// `stream`, checks the launch (one-line runtime error) and never synchronises. Layouts are those
// of lib/nn: NCHW activations, (batch, features) for dense layers. The templates take the
// activation element type T (gpu/precision.h: float, __nv_bfloat16 or __half; instantiated for the
// three), compute in float and round once on the store; sums (bias gradients) are float.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace scalelab::gpu {

// y[i] = act(y[i] + b[(i / inner) % channels]) over `total` floats; b may be null (no bias).
// Dense: inner 1, channels = units. Conv2D: inner = Ho*Wo, channels = filters.
template <class T>
void bias_activation(T* y, const T* b, std::size_t total, std::size_t inner, std::size_t channels, bool relu,
                     cudaStream_t stream);
// dz[i] = y[i] > 0 ? dy[i] : 0 (ReLU's derivative read from its output); dz may alias dy.
// db[c] += sum over samples and positions of dy (n, channels, hw), NCHW: a convolution's bias
// gradient (our kernel: cuDNN's cudnnConvolutionBackwardBias was 0.95 ms per layer at batch 1024 on
// an H100, most of the step).
template <class T>
void conv_bias_grad(const T* dy, float* db, std::size_t n, std::size_t channels, std::size_t hw, cudaStream_t stream);
template <class T>
void relu_backward(const T* y, const T* dy, T* dz, std::size_t n, cudaStream_t stream);

// y[p] = mean of x's plane p (planes = batch * channels, `plane` floats each): global average
// pooling; backward spreads dy[p] / plane over the plane (dx written, not accumulated).
void global_avg_pool_forward(const float* x, float* y, std::size_t planes, std::size_t plane, cudaStream_t stream);
void global_avg_pool_backward(const float* dy, float* dx, std::size_t planes, std::size_t plane, cudaStream_t stream);
// y[i] += x[i] (a residual block's two input-gradient paths joined).
void add_into(float* y, const float* x, std::size_t n, cudaStream_t stream);

struct PoolGeometry {
  int planes, h, w, pool, stride, ho, wo;  // planes = batch * channels
  // The input is NHWC (channels innermost) rather than NCHW; the output is NCHW either way. Needs
  // stride == pool, h and w multiples of it (nhwc_pool_fits); channels = planes / batch.
  bool nhwc_in = false;
  int channels = 1;
};
// Whether an NHWC-input pool of these sizes runs here: windows that tile the input exactly, and one
// tile of `pool` input rows (pool * w * channels elements of `element_bytes`) in a block's shared memory.
[[nodiscard]] bool nhwc_pool_fits(int h, int w, int channels, int pool, int stride, std::size_t element_bytes);
// Max over each window; arg receives the winning index within the input plane (ties: the first,
// as nn::MaxPool2D and PyTorch).
template <class T>
void maxpool_forward(const T* x, T* y, std::int32_t* arg, const PoolGeometry& g, cudaStream_t stream);
// dx: each dy routed to its window's maximum (summed where windows overlap), 0 elsewhere. y is the
// forward's output. input_relu: the input is a ReLU's output whose derivative is applied here, so
// the layer before skips its own mask pass: a window whose maximum is not positive passes no
// gradient (at a window's maximum the input equals y, and the ReLU passes gradient where it is > 0).
template <class T>
void maxpool_backward(const T* dy, const T* y, const std::int32_t* arg, T* dx, const PoolGeometry& g,
                      bool input_relu, cudaStream_t stream);

// Inverted dropout with nn::Dropout's counter-based mask (same key: same mask): element i is kept
// when 16 bits of splitmix64(key + golden * (i / 4 + 1)) are >= threshold, and scaled by `scale`.
// The key is read from device memory (store_key writes it on the stream, its argument taken at
// launch), so a captured CUDA graph replays with each forward's own key. Backward recomputes the
// mask from the key (no mask buffer).
void store_key(std::uint64_t* dst, std::uint64_t key, cudaStream_t stream);
template <class T>
void dropout_forward(const T* x, T* y, std::size_t n, const std::uint64_t* key, std::uint32_t threshold,
                     float scale, cudaStream_t stream);
template <class T>
void dropout_backward(const T* dy, T* dx, std::size_t n, const std::uint64_t* key, std::uint32_t threshold,
                      float scale, cudaStream_t stream);

// Softmax cross-entropy of logits (n, classes) against labels. Adds sum of the n losses to
// tally[0] and the count of argmax == label to tally[1] (double, on the device); labels outside
// [0, classes) are counted in *bad and contribute nothing. dlogits (may be null) receives
// (softmax - onehot) * grad_scale / n, as nn::softmax_cross_entropy.
void softmax_cross_entropy(const float* logits, const std::int32_t* labels, std::size_t n, std::size_t classes,
                           float* dlogits, float grad_scale, double* tally, unsigned long long* bad,
                           cudaStream_t stream);

}  // namespace scalelab::gpu
