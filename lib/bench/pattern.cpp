// Known-result inputs and exact wrong-element counting for the benchmark (pattern.h).
#include "bench/pattern.h"

#include <cmath>
#include <cstring>
#include <limits>

#include "comm/reduce.h"

namespace scalelab::bench {
namespace {

using collectives::Collective;
using comm::DataType;
using comm::ReduceOp;

double a_of(std::size_t i) { return 1.0 + static_cast<double>(i % 13); }

// Typed access to one element of a buffer of `type`.
void store(DataType type, void* buf, std::size_t i, double v) {
  switch (type) {
    case DataType::f32: static_cast<float*>(buf)[i] = static_cast<float>(v); break;
    case DataType::f64: static_cast<double*>(buf)[i] = v; break;
    case DataType::f16: static_cast<std::uint16_t*>(buf)[i] = comm::float_to_half(static_cast<float>(v)); break;
    case DataType::i32: static_cast<std::int32_t*>(buf)[i] = static_cast<std::int32_t>(v); break;
  }
}

double load(DataType type, const void* buf, std::size_t i) {
  switch (type) {
    case DataType::f32: return static_cast<const float*>(buf)[i];
    case DataType::f64: return static_cast<const double*>(buf)[i];
    case DataType::f16: return comm::half_to_float(static_cast<const std::uint16_t*>(buf)[i]);
    case DataType::i32: return static_cast<const std::int32_t*>(buf)[i];
  }
  return 0.0;
}

double tolerance(DataType type) {
  switch (type) {
    case DataType::f32: return 1e-6;
    case DataType::f64: return 1e-12;
    case DataType::f16: return 1e-3;
    case DataType::i32: return 0.0;
  }
  return 0.0;
}

bool wrong(double got, double expected, double rel_tol) {
  if (std::isnan(got)) return true;
  return std::fabs(got - expected) > rel_tol * std::fabs(expected);
}

}  // namespace

double input_value(int rank, int nranks, std::size_t index) {
  const auto n = static_cast<std::size_t>(nranks);
  const auto shift = static_cast<double>((static_cast<std::size_t>(rank) + index) % n);
  return a_of(index) + 2.0 * shift - static_cast<double>(nranks - 1);
}

double reduced_value(ReduceOp op, int nranks, std::size_t index) {
  const double a = a_of(index);
  switch (op) {
    case ReduceOp::sum: return a * nranks;
    case ReduceOp::avg: return a;
    case ReduceOp::min: return a - (nranks - 1);
    case ReduceOp::max: return a + (nranks - 1);
  }
  return a;
}

void fill_input(Collective c, DataType type, int rank, int nranks, std::size_t call_count, void* send) {
  const std::size_t elems = c == Collective::reduce_scatter ? call_count * static_cast<std::size_t>(nranks) : call_count;
  for (std::size_t i = 0; i < elems; ++i) store(type, send, i, input_value(rank, nranks, i));
}

void poison(DataType type, std::size_t elems, void* buf) {
  const double bad = type == DataType::i32 ? static_cast<double>(std::numeric_limits<std::int32_t>::min())
                                           : std::numeric_limits<double>::quiet_NaN();
  for (std::size_t i = 0; i < elems; ++i) store(type, buf, i, bad);
}

std::uint64_t count_wrong(Collective c, DataType type, ReduceOp op, int rank, int nranks, int root,
                          std::size_t call_count, const void* recv) {
  const double tol = tolerance(type);
  std::uint64_t bad = 0;
  switch (c) {
    case Collective::allreduce:
      for (std::size_t i = 0; i < call_count; ++i) bad += wrong(load(type, recv, i), reduced_value(op, nranks, i), tol);
      break;
    case Collective::broadcast:
      for (std::size_t i = 0; i < call_count; ++i) bad += wrong(load(type, recv, i), input_value(root, nranks, i), tol);
      break;
    case Collective::allgather:
      for (int q = 0; q < nranks; ++q) {
        const std::size_t base = static_cast<std::size_t>(q) * call_count;
        for (std::size_t i = 0; i < call_count; ++i) {
          bad += wrong(load(type, recv, base + i), input_value(q, nranks, i), tol);
        }
      }
      break;
    case Collective::reduce_scatter: {
      const std::size_t base = static_cast<std::size_t>(rank) * call_count;
      for (std::size_t i = 0; i < call_count; ++i) {
        bad += wrong(load(type, recv, i), reduced_value(op, nranks, base + i), tol);
      }
      break;
    }
  }
  return bad;
}

}  // namespace scalelab::bench
