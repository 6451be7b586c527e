// The mpi backend's in-place collectives follow NCCL's convention (comm/communicator.h):
// reduce-scatter with recv == send + rank * count, allgather with send == recv + rank * count.
// MPI's own in-place forms differ (MPI_IN_PLACE; reduce-scatter's result lands at the start of
// the buffer), so each in-place result is checked against the out-of-place result of the same
// input and against the sum computed here, on every rank. Run under mpiexec at 2 and 3 ranks.
#include <gtest/gtest.h>

#include <cstddef>
#include <sstream>
#include <string>
#include <vector>

#include "comm/factory.h"
#include "comm/types.h"

namespace scalelab::test {
namespace {

using comm::DataType;
using comm::ReduceOp;

comm::Communicator& world() {
  static auto comm = comm::make_communicator("mpi");
  return *comm;
}

// Element j of rank r's input: small integers, so every sum is exact in float and double.
double input_value(int r, std::size_t j) { return static_cast<double>((static_cast<std::size_t>(r) * 5 + j) % 13) - 6; }

const std::vector<std::size_t> kCounts{1, 3, 1000, 65537};

// Every rank's count of failures, maxed: all ranks reach the same verdict.
double worst_over_ranks(const std::vector<std::string>& failures) {
  return world().max_over_ranks(static_cast<double>(failures.size()));
}

template <typename T>
void check_reduce_scatter(DataType type, std::vector<std::string>& failures) {
  auto& comm = world();
  const int p = comm.size(), r = comm.rank();
  for (const std::size_t n : kCounts) {
    const std::size_t total = static_cast<std::size_t>(p) * n, mine = static_cast<std::size_t>(r) * n;
    std::vector<T> input(total), out(n), buf(total);
    for (std::size_t j = 0; j < total; ++j) input[j] = static_cast<T>(input_value(r, j));
    comm.reduce_scatter(input.data(), out.data(), n, type, ReduceOp::sum);
    buf = input;
    comm.reduce_scatter(buf.data(), buf.data() + mine, n, type, ReduceOp::sum);
    for (std::size_t i = 0; i < n; ++i) {
      double want = 0;
      for (int q = 0; q < p; ++q) want += input_value(q, mine + i);
      if (buf[mine + i] != out[i] || out[i] != static_cast<T>(want)) {
        std::ostringstream s;
        s << "reduce-scatter " << comm::name_of(type) << " count " << n << " rank " << r << " element " << i
          << ": in-place " << buf[mine + i] << ", out-of-place " << out[i] << ", expected " << want;
        failures.push_back(s.str());
        break;
      }
    }
  }
}

template <typename T>
void check_allgather(DataType type, std::vector<std::string>& failures) {
  auto& comm = world();
  const int p = comm.size(), r = comm.rank();
  for (const std::size_t n : kCounts) {
    const std::size_t total = static_cast<std::size_t>(p) * n, mine = static_cast<std::size_t>(r) * n;
    std::vector<T> block(n), out(total), buf(total, static_cast<T>(99));
    for (std::size_t i = 0; i < n; ++i) block[i] = static_cast<T>(input_value(r, i));
    comm.allgather(block.data(), out.data(), n, type);
    for (std::size_t i = 0; i < n; ++i) buf[mine + i] = block[i];
    comm.allgather(buf.data() + mine, buf.data(), n, type);
    for (std::size_t j = 0; j < total; ++j) {
      const double want = input_value(static_cast<int>(j / n), j % n);
      if (buf[j] != out[j] || out[j] != static_cast<T>(want)) {
        std::ostringstream s;
        s << "allgather " << comm::name_of(type) << " count " << n << " rank " << r << " element " << j
          << ": in-place " << buf[j] << ", out-of-place " << out[j] << ", expected " << want;
        failures.push_back(s.str());
        break;
      }
    }
  }
}

TEST(MpiInPlace, ReduceScatterMatchesOutOfPlaceOnEveryRank) {
  std::vector<std::string> failures;
  check_reduce_scatter<float>(DataType::f32, failures);
  check_reduce_scatter<double>(DataType::f64, failures);
  EXPECT_EQ(worst_over_ranks(failures), 0.0)
      << (failures.empty() ? std::string("failures on another rank") : failures.front());
}

TEST(MpiInPlace, AllgatherMatchesOutOfPlaceOnEveryRank) {
  std::vector<std::string> failures;
  check_allgather<float>(DataType::f32, failures);
  check_allgather<double>(DataType::f64, failures);
  EXPECT_EQ(worst_over_ranks(failures), 0.0)
      << (failures.empty() ? std::string("failures on another rank") : failures.front());
}

}  // namespace
}  // namespace scalelab::test
