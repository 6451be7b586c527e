// Precision names and the library types behind them (gpu/precision.h).
#include "gpu/precision.h"

#include "core/error.h"

namespace scalelab::gpu {

Precision parse_precision(const std::string& name) {
  if (name == "fp32") return Precision::fp32;
  if (name == "tf32") return Precision::tf32;
  if (name == "bf16") return Precision::bf16;
  if (name == "fp16") return Precision::fp16;
  throw_parameter(ErrorKind::usage, "precision", name + ": unknown precision; use fp32, tf32, bf16 or fp16");
}

const char* precision_name(Precision p) {
  switch (p) {
    case Precision::tf32: return "tf32";
    case Precision::bf16: return "bf16";
    case Precision::fp16: return "fp16";
    default: return "fp32";
  }
}

cudnnDataType_t cudnn_type(Precision p) {
  switch (p) {
    case Precision::bf16: return CUDNN_DATA_BFLOAT16;
    case Precision::fp16: return CUDNN_DATA_HALF;
    default: return CUDNN_DATA_FLOAT;
  }
}

cudaDataType_t cuda_type(Precision p) {
  switch (p) {
    case Precision::bf16: return CUDA_R_16BF;
    case Precision::fp16: return CUDA_R_16F;
    default: return CUDA_R_32F;
  }
}

std::string precision_in_words(Precision p) {
  switch (p) {
    case Precision::tf32:
      return "tf32: float32 tensors, convolutions and matrix products on TF32 tensor cores";
    case Precision::bf16:
      return "bf16: bfloat16 activations and products (float32 accumulation), float32 master weights, gradients "
             "and optimizer";
    case Precision::fp16:
      return "fp16: half-precision activations and products (float32 accumulation), float32 master weights, "
             "gradients and optimizer, dynamic loss scaling";
    default:
      return "fp32: float32 (cuDNN may use TF32 tensor cores for convolutions, as PyTorch's default)";
  }
}

}  // namespace scalelab::gpu
