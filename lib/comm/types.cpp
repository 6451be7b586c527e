// Names, parsing and sizes of the element types and reduction operators (types.h).
#include "comm/types.h"

#include <array>
#include <cstdint>
#include <string>

#include "core/error.h"

namespace scalelab::comm {
namespace {

constexpr std::array kTypes{DataType::f32, DataType::f64, DataType::f16, DataType::i32};
constexpr std::array kOps{ReduceOp::sum, ReduceOp::avg, ReduceOp::min, ReduceOp::max};

template <typename T, std::size_t N>
std::string joined_names(const std::array<T, N>& values) {
  std::string out;
  for (const T v : values) {
    if (!out.empty()) out += ", ";
    out += name_of(v);
  }
  return out;
}

}  // namespace

std::size_t size_of(DataType t) {
  switch (t) {
    case DataType::f32: return sizeof(float);
    case DataType::f64: return sizeof(double);
    case DataType::f16: return sizeof(std::uint16_t);
    case DataType::i32: return sizeof(std::int32_t);
  }
  return 0;
}

std::string_view name_of(DataType t) {
  switch (t) {
    case DataType::f32: return "float";
    case DataType::f64: return "double";
    case DataType::f16: return "half";
    case DataType::i32: return "int32";
  }
  return "?";
}

std::string_view name_of(ReduceOp op) {
  switch (op) {
    case ReduceOp::sum: return "sum";
    case ReduceOp::avg: return "avg";
    case ReduceOp::min: return "min";
    case ReduceOp::max: return "max";
  }
  return "?";
}

DataType parse_datatype(std::string_view text, std::string_view what) {
  for (const DataType t : kTypes) {
    if (text == name_of(t)) return t;
  }
  // The usual aliases (nccl-tests accepts both spellings).
  if (text == "float32" || text == "f32") return DataType::f32;
  if (text == "float64" || text == "f64") return DataType::f64;
  if (text == "float16" || text == "f16") return DataType::f16;
  if (text == "int" || text == "i32") return DataType::i32;
  throw_usage(std::string(what) + ": unknown data type '" + std::string(text) + "'; use one of " +
              joined_names(kTypes));
}

ReduceOp parse_reduce_op(std::string_view text, std::string_view what) {
  for (const ReduceOp op : kOps) {
    if (text == name_of(op)) return op;
  }
  throw_usage(std::string(what) + ": unknown reduction operator '" + std::string(text) +
              "'; use one of " + joined_names(kOps));
}

}  // namespace scalelab::comm
