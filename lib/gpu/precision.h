// What the CUDA engine computes in (TrainConfig::precision, `--precision`), and the element types
// behind it:
//   fp32  activations and gradients in float32; cuDNN's convolutions may use TF32 tensor cores
//         (CUDNN_DEFAULT_MATH, PyTorch's default too), cuBLAS's products stay float32
//   tf32  as fp32, and cuBLAS's products on TF32 tensor cores too (CUBLAS_TF32_TENSOR_OP_MATH)
//   bf16  activations, their gradients, the weights the layers read and the products' operands in
//         bfloat16, accumulated in float32 (cuDNN's PSEUDO_BFLOAT16 configuration, cublasGemmEx with
//         CUBLAS_COMPUTE_32F); float32 master weights, parameter gradients and optimizer
//   fp16  as bf16 with IEEE half, and dynamic loss scaling (gpu/loss_scaler.h) against its
//         narrower range
// Layers that have no 16-bit kernels (BatchNorm, GlobalAvgPool, the residual block) run in fp32 or
// tf32 only: DeviceModel names them for bf16 and fp16.
#pragma once
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cudnn.h>

#include <cstddef>
#include <string>

namespace scalelab::gpu {

enum class Precision { fp32, tf32, bf16, fp16 };

// "fp32", "tf32", "bf16", "fp16"; anything else is a usage error naming the precision parameter.
[[nodiscard]] Precision parse_precision(const std::string& name);
[[nodiscard]] const char* precision_name(Precision p);
// Activations stored in 16 bits (bf16, fp16).
[[nodiscard]] inline bool half_storage(Precision p) { return p == Precision::bf16 || p == Precision::fp16; }
// Bytes per activation element.
[[nodiscard]] inline std::size_t activation_bytes(Precision p) { return half_storage(p) ? 2 : 4; }
[[nodiscard]] cudnnDataType_t cudnn_type(Precision p);  // CUDNN_DATA_FLOAT, _BFLOAT16 or _HALF
[[nodiscard]] cudaDataType_t cuda_type(Precision p);    // CUDA_R_32F, CUDA_R_16BF or CUDA_R_16F
// The precision in words, for the start-up lines ("bf16: bfloat16 activations and products, ...").
[[nodiscard]] std::string precision_in_words(Precision p);

// Calls f with a value of the activation element type of p (float, __nv_bfloat16 or __half), so
// that a template is instantiated for each: with_element(p, [&](auto zero) { using T = decltype(zero); ... }).
template <class F>
decltype(auto) with_element(Precision p, F&& f) {
  switch (p) {
    case Precision::bf16: return f(__nv_bfloat16{});
    case Precision::fp16: return f(__half{});
    default: return f(float{});
  }
}

}  // namespace scalelab::gpu
