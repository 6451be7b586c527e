// Flatten as a copy, for direct calls (see flatten.h: Model aliases instead).
#include "nn/flatten.h"

#include <algorithm>

namespace scalelab::nn {

void Flatten::forward(ConstTensorView in, TensorView out, bool /*training*/) {
  std::copy_n(in.data, in.numel(), out.data);
}

void Flatten::backward(ConstTensorView /*in*/, ConstTensorView /*out*/, ConstTensorView dout, TensorView din) {
  if (!din.empty()) std::copy_n(dout.data, dout.numel(), din.data);
}

}  // namespace scalelab::nn
