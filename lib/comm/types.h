// Element types and reduction operators shared by communicators, collective algorithms, the
// benchmark and the cost model. float16 is reduced in float32 (converted, reduced, rounded back).
#pragma once
#include <cstddef>
#include <string>
#include <string_view>

namespace scalelab::comm {

enum class DataType { f32, f64, f16, i32 };
enum class ReduceOp { sum, avg, min, max };

[[nodiscard]] std::size_t size_of(DataType t);
[[nodiscard]] std::string_view name_of(DataType t);  // "float", "double", "half", "int32" (nccl-tests' names)
[[nodiscard]] std::string_view name_of(ReduceOp op);  // "sum", "avg", "min", "max"
// Parse user input; errors are usage errors naming `what` (the flag) and the accepted values.
[[nodiscard]] DataType parse_datatype(std::string_view text, std::string_view what);
[[nodiscard]] ReduceOp parse_reduce_op(std::string_view text, std::string_view what);

}  // namespace scalelab::comm
