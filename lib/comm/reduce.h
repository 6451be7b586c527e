// Reduction kernels: the one place scalelab combines two buffers element by element. Every
// algorithm in collectives/, every backend's library collective and the tests' references call
// these, so sum/avg/min/max mean the same thing everywhere.
//
//   reduce_into(acc, incoming, n, DataType::f32, ReduceOp::sum);     // acc[i] = acc[i] + incoming[i]
//   reduce_to(out, a, b, n, DataType::f32, ReduceOp::sum);           // out[i] = a[i] + b[i]
//   finish_reduction(out, n, DataType::f32, ReduceOp::avg, nranks);  // out[i] /= nranks (avg only)
//
// avg accumulates as sum; the division by the rank count happens once, at the end, through
// finish_reduction (a no-op for the other ops). For int32, avg truncates toward zero (C++ integer
// division): the average of {1, 2} over two ranks is 1, of {-1, -2} is -1.
// float16 is converted to float32, reduced, and rounded back to the nearest float16 (ties to
// even) after every pairwise step, as NCCL does. Buffers may alias exactly (out == a or out == b)
// but must not partially overlap.
#pragma once
#include <cstddef>
#include <cstdint>

#include "comm/types.h"

namespace scalelab::comm {

void reduce_into(void* acc, const void* incoming, std::size_t count, DataType type, ReduceOp op);
void reduce_to(void* out, const void* a, const void* b, std::size_t count, DataType type, ReduceOp op);
// Divides every element by `nranks` when op is avg; does nothing otherwise.
void finish_reduction(void* buf, std::size_t count, DataType type, ReduceOp op, int nranks);

// IEEE binary16 <-> binary32 conversion (round to nearest, ties to even; NaN stays NaN).
// A plain bit-level implementation: the reference the vectorised kernels are tested against,
// and what tests and the benchmark use to build float16 inputs.
[[nodiscard]] float half_to_float(std::uint16_t h);
[[nodiscard]] std::uint16_t float_to_half(float f);

}  // namespace scalelab::comm
