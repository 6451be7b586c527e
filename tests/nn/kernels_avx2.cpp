// The CPU engine's im2col / col2im and max-pool compiled for AVX2 without AVX-512, whatever the
// build's own -march: test_nn_kernels_avx2 links these in place of lib/nn's, so that the AVX2
// paths are tested on CPUs whose native build takes the AVX-512 ones (tests/nn/CMakeLists.txt).
#if !defined(__AVX2__) || defined(__AVX512F__)
#error "kernels_avx2.cpp is compiled with -march=x86-64-v3 -mno-avx512f (tests/nn/CMakeLists.txt)"
#endif
#include "nn/im2col.cpp"     // NOLINT(bugprone-suspicious-include): the same source, another target ISA
#include "nn/maxpool2d.cpp"  // NOLINT(bugprone-suspicious-include)
