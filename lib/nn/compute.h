// Compute threads for the nn engine: how many threads the BLAS products and the engine's own
// loops may use in this process. The trainer's --threads calls set_compute_threads once at start.
#pragma once

namespace scalelab::nn {

// n >= 1; throws usage otherwise. Applies to OpenBLAS (when loaded) and to the engine's loops.
void set_compute_threads(int n);
[[nodiscard]] int compute_threads();

}  // namespace scalelab::nn
