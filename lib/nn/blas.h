// Matrix products for the nn engine: one entry point, sgemm, row-major like cblas_sgemm.
// Backend: OpenBLAS loaded at run time with dlopen (see blas.cpp for why: the environment presets
// OPENBLAS_CORETYPE=Haswell, which would halve its speed), else Eigen's own product.
// Environment:
//   SCALELAB_BLAS=eigen|openblas   use Eigen even when OpenBLAS is present (openblas: the default)
//   SCALELAB_BLAS_LIBRARY=PATH     the OpenBLAS shared library to load (default libopenblas.so.0)
//   SCALELAB_BLAS_CORETYPE=NAME    the OpenBLAS kernel set (e.g. SkylakeX, Haswell); default: let
//                                  OpenBLAS detect the CPU, ignoring a preset OPENBLAS_CORETYPE
#pragma once
#include <string>
#include <vector>

namespace scalelab::nn {

// C = alpha * op(A) * op(B) + beta * C, row-major; op(X) = X or X^T. M x N result, inner size K.
// lda/ldb/ldc are row strides of the stored (untransposed) matrices.
void sgemm(bool trans_a, bool trans_b, int m, int n, int k, float alpha, const float* a, int lda,
           const float* b, int ldb, float beta, float* c, int ldc);

// The products a piece of code asks for, for benchmarks that time them alone (the GEMM-bound limit
// of a training step, tests/perf/bench_cnn_step). While a sink is set every sgemm call appends
// its shape, from any thread; record_gemms(nullptr) stops. Not for use inside training.
struct GemmCall {
  bool trans_a = false, trans_b = false;
  int m = 0, n = 0, k = 0, lda = 0, ldb = 0, ldc = 0;
  float beta = 0;
};
void record_gemms(std::vector<GemmCall>* sink);

// One line for `scalelab info` and result records: "OpenBLAS 0.3.21 (SkylakeX kernels, ... )" or
// "Eigen 3.4.0 (built-in product; OpenBLAS not found: ...)".
[[nodiscard]] std::string blas_description();
// "openblas" or "eigen".
[[nodiscard]] std::string blas_backend();
// Where SCALELAB_BLAS, SCALELAB_BLAS_LIBRARY or SCALELAB_BLAS_CORETYPE is set: loads the backend
// now and throws an input error naming the variable when it asks for what cannot be had (an
// unknown SCALELAB_BLAS, a library that does not load); warns once on stderr when OpenBLAS chose
// other kernels than SCALELAB_BLAS_CORETYPE names (rank 0 only). Without them, returns at once (nothing loaded).
void check_blas_environment();

// Applies the thread count to the BLAS backend (compute.cpp calls this).
void blas_set_threads(int n);

}  // namespace scalelab::nn
