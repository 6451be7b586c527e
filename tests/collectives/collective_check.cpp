// The reference checks of collective_check.h.
#include "collective_check.h"

#include <cstdint>
#include <cstring>
#include <sstream>

#include "comm/reduce.h"

namespace scalelab::test {
namespace {

using collectives::Collective;
using comm::DataType;
using comm::ReduceOp;

void store(DataType t, void* base, std::size_t i, double v) {
  switch (t) {
    case DataType::f32: static_cast<float*>(base)[i] = static_cast<float>(v); return;
    case DataType::f64: static_cast<double*>(base)[i] = v; return;
    case DataType::i32: static_cast<std::int32_t*>(base)[i] = static_cast<std::int32_t>(v); return;
    case DataType::f16: static_cast<std::uint16_t*>(base)[i] = comm::float_to_half(static_cast<float>(v)); return;
  }
}
double load(DataType t, const void* base, std::size_t i) {
  switch (t) {
    case DataType::f32: return static_cast<const float*>(base)[i];
    case DataType::f64: return static_cast<const double*>(base)[i];
    case DataType::i32: return static_cast<const std::int32_t*>(base)[i];
    case DataType::f16: return comm::half_to_float(static_cast<const std::uint16_t*>(base)[i]);
  }
  return 0;
}

// The exact result of reducing element i over p ranks' inputs (input index `i` of each rank).
double reference_reduce(DataType t, ReduceOp op, int p, std::size_t i) {
  double acc = test_value(0, i);
  for (int q = 1; q < p; ++q) {
    const double v = test_value(q, i);
    if (op == ReduceOp::min) acc = v < acc ? v : acc;
    else if (op == ReduceOp::max) acc = v > acc ? v : acc;
    else acc += v;
  }
  if (op != ReduceOp::avg) return acc;
  switch (t) {
    case DataType::f32: return static_cast<float>(acc) / static_cast<float>(p);
    case DataType::f64: return acc / p;
    case DataType::i32: return static_cast<double>(static_cast<std::int32_t>(acc) / p);
    case DataType::f16: return comm::half_to_float(comm::float_to_half(static_cast<float>(acc) / static_cast<float>(p)));
  }
  return acc;
}

std::string describe(const collectives::Algorithm& algo, const CheckCase& c, int p) {
  std::ostringstream s;
  s << collectives::name_of(algo.collective()) << "/" << algo.name() << " p=" << p << " count=" << c.count
    << " type=" << comm::name_of(c.type) << " op=" << comm::name_of(c.op)
    << (c.in_place ? " in-place" : " out-of-place") << " root=" << c.root;
  return s.str();
}

}  // namespace

// The largest count check_all_cases runs, and the widest element.
constexpr std::size_t kLargestCount = 65537, kWidestElement = 8;

std::size_t check_memory_bytes(int nranks) {
  const std::size_t one = (static_cast<std::size_t>(nranks) * kLargestCount + 1) * kWidestElement;
  return 2 * (one + 64);
}

std::string check_collective(comm::Communicator& comm, collectives::Algorithm& algo, const CheckCase& c,
                             unsigned char* memory) {
  const int p = comm.size(), r = comm.rank();
  const std::size_t es = comm::size_of(c.type), n = c.count;
  const auto pn = static_cast<std::size_t>(p) * n;
  const Collective kind = algo.collective();
  // Sizes of the input and output, in elements, and the element where this rank's data sits
  // in the single buffer of the in-place form.
  std::size_t in_n = n, out_n = n, in_at = 0, out_at = 0;
  if (kind == Collective::allgather) {
    out_n = pn;
    in_at = static_cast<std::size_t>(r) * n;
  } else if (kind == Collective::reduce_scatter) {
    in_n = pn;
    out_at = static_cast<std::size_t>(r) * n;
  }
  const std::size_t one_n = std::max(in_n, out_n);
  // +1 element so the pointers are valid even at count 0.
  std::vector<unsigned char> own_a, own_b;
  unsigned char* a = memory;
  unsigned char* b = memory + ((one_n + 1) * es + 63) / 64 * 64;
  if (memory == nullptr) {
    own_a.resize((one_n + 1) * es);
    own_b.resize((out_n + 1) * es);
    a = own_a.data();
    b = own_b.data();
  }
  constexpr double kSentinel = 99;
  unsigned char* send = a + in_at * es;
  unsigned char* recv = c.in_place ? a + out_at * es : b;
  for (std::size_t i = 0; i < one_n + 1; ++i) store(c.type, a, i, kSentinel);
  for (std::size_t i = 0; i < out_n + 1; ++i) store(c.type, b, i, kSentinel);
  const int input_rank = kind == Collective::broadcast ? (r == c.root ? r : -1) : r;
  for (std::size_t i = 0; i < in_n; ++i) {
    if (input_rank >= 0) store(c.type, send, i, test_value(input_rank, i));
  }

  algo.run(comm, send, recv, n, c.type, c.op, c.root);

  for (std::size_t i = 0; i < out_n; ++i) {
    double want = 0;
    switch (kind) {
      case Collective::allreduce: want = reference_reduce(c.type, c.op, p, i); break;
      case Collective::broadcast: want = test_value(c.root, i); break;
      case Collective::allgather: want = test_value(static_cast<int>(i / n), i % n); break;
      case Collective::reduce_scatter: want = reference_reduce(c.type, c.op, p, static_cast<std::size_t>(r) * n + i); break;
    }
    const double got = load(c.type, recv, i);
    if (got != want) {
      std::ostringstream s;
      s << describe(algo, c, p) << ": rank " << r << " element " << i << " is " << got << ", expected " << want;
      return s.str();
    }
  }
  if (!c.in_place) {  // the input must be left as it was, and nothing written past the output
    for (std::size_t i = 0; i < in_n; ++i) {
      if (input_rank >= 0 && load(c.type, send, i) != test_value(input_rank, i)) {
        return describe(algo, c, p) + ": rank " + std::to_string(r) + " input element " + std::to_string(i) +
               " was modified";
      }
    }
    if (load(c.type, b, out_n) != kSentinel) {
      return describe(algo, c, p) + ": rank " + std::to_string(r) + " wrote past the end of the output";
    }
  }
  return "";
}

std::vector<std::string> check_all_cases(comm::Communicator& comm, collectives::Algorithm& algo,
                                         unsigned char* memory) {
  const int p = comm.size();
  const auto up = static_cast<std::size_t>(p);
  const std::vector<std::size_t> counts{0, 1, up - 1, up, up + 1, 1000, kLargestCount};
  const bool reduces = algo.collective() == Collective::allreduce || algo.collective() == Collective::reduce_scatter;
  const std::vector<ReduceOp> ops =
      reduces ? std::vector<ReduceOp>{ReduceOp::sum, ReduceOp::avg, ReduceOp::min, ReduceOp::max}
              : std::vector<ReduceOp>{ReduceOp::sum};
  const std::vector<int> roots = algo.collective() == Collective::broadcast ? std::vector<int>{0, p - 1}
                                                                            : std::vector<int>{0};
  std::vector<std::string> failures;
  for (const DataType t : {DataType::f32, DataType::f64, DataType::f16, DataType::i32}) {
    for (const ReduceOp op : ops) {
      for (const std::size_t n : counts) {
        for (const bool in_place : {false, true}) {
          for (const int root : roots) {
            std::string f = check_collective(comm, algo, CheckCase{n, t, op, in_place, root}, memory);
            if (!f.empty()) failures.push_back(std::move(f));
          }
        }
      }
    }
  }
  return failures;
}

}  // namespace scalelab::test
