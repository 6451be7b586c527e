// Weight initialisation from a seed: He (Kaiming) for layers followed by ReLU, Glorot (Xavier) for
// the others, both in their uniform form as Keras and PyTorch use. fan_in/fan_out count the
// inputs/outputs of one unit (for a convolution: channels x kernel height x kernel width).
#pragma once
#include <cstddef>

#include "core/rng.h"

namespace scalelab::nn {

enum class Init { he_uniform, glorot_uniform, zeros, ones };

// He uniform: U(-sqrt(6/fan_in), +sqrt(6/fan_in)). Glorot uniform: U(-sqrt(6/(fan_in+fan_out)), ...).
void initialize(float* w, std::size_t n, Init init, std::size_t fan_in, std::size_t fan_out, Rng& rng);

}  // namespace scalelab::nn
