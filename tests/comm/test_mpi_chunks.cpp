// The mpi backend cuts transfers above MPI's int counts into chunks. With the chunk lowered to
// 1000 elements (bytes for point-to-point) those paths run on small buffers: every call here
// must give exactly what the unchunked communicator gives (or, point-to-point, the bytes sent),
// including a ring of sendrecv calls whose two directions need different numbers of chunks.
// Run under mpiexec at 2 and 3 ranks.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "comm/backends/mpi_communicator.h"
#include "comm/reduce.h"
#include "comm/types.h"
#include "core/error.h"

namespace scalelab::test {
namespace {

using comm::DataType;
using comm::MpiCommunicator;
using comm::ReduceOp;

constexpr std::size_t kChunk = 1000;

MpiCommunicator& whole() {
  static MpiCommunicator comm;
  return comm;
}
MpiCommunicator& chunked() {
  static MpiCommunicator comm(kChunk);
  return comm;
}

// Counts around the chunk: none, one, one short, exactly one, just over, several and a remainder.
const std::vector<std::size_t> kCounts{0, 1, kChunk - 1, kChunk, kChunk + 1, 4 * kChunk + 321};

unsigned char byte_at(int rank, std::size_t i, int salt) {
  return static_cast<unsigned char>((static_cast<std::size_t>(rank) * 31 + i * 7 + static_cast<std::size_t>(salt)) % 251);
}

// Element i of `rank`'s input as a small integer of type t: sums over a few ranks stay exact.
void fill(DataType t, std::vector<unsigned char>& buf, std::size_t n, int rank) {
  buf.assign((n + 1) * comm::size_of(t), 0);  // +1 so data() is valid at n == 0
  for (std::size_t i = 0; i < n; ++i) {
    const int v = static_cast<int>((static_cast<std::size_t>(rank) * 5 + i * 3) % 13) - 6;
    switch (t) {
      case DataType::f32: reinterpret_cast<float*>(buf.data())[i] = static_cast<float>(v); break;
      case DataType::f64: reinterpret_cast<double*>(buf.data())[i] = v; break;
      case DataType::i32: reinterpret_cast<std::int32_t*>(buf.data())[i] = v; break;
      case DataType::f16: reinterpret_cast<std::uint16_t*>(buf.data())[i] = comm::float_to_half(static_cast<float>(v)); break;
    }
  }
}

std::string where(const char* call, DataType t, std::size_t n, const char* form) {
  std::ostringstream s;
  s << call << " " << comm::name_of(t) << " count " << n << " " << form << " on rank " << whole().rank();
  return s.str();
}

bool same(const std::vector<unsigned char>& a, const std::vector<unsigned char>& b, std::size_t bytes) {
  return std::memcmp(a.data(), b.data(), bytes) == 0;
}

void expect_all_ranks_pass(const std::vector<std::string>& failures) {
  const double worst = whole().max_over_ranks(static_cast<double>(failures.size()));
  EXPECT_EQ(worst, 0.0) << (failures.empty() ? std::string("failures on another rank") : failures.front());
}

constexpr DataType kTypes[] = {DataType::f32, DataType::f64, DataType::f16, DataType::i32};

TEST(MpiChunks, SendAndRecvDeliverEveryByte) {
  auto& comm = chunked();
  const int p = comm.size(), r = comm.rank();
  std::vector<std::string> failures;
  for (const std::size_t n : kCounts) {
    std::vector<unsigned char> buf(n + 1);
    for (int q = 1; q < p; ++q) {  // q -> 0, then 0 -> q
      if (r == q) {
        for (std::size_t i = 0; i < n; ++i) buf[i] = byte_at(q, i, 1);
        comm.send(buf.data(), n, 0, 7);
        comm.recv(buf.data(), n, 0, 7);
        for (std::size_t i = 0; i < n; ++i) {
          if (buf[i] != byte_at(0, i, 2)) {
            failures.push_back("recv of " + std::to_string(n) + " bytes from rank 0: byte " + std::to_string(i) + " wrong");
            break;
          }
        }
      } else if (r == 0) {
        comm.recv(buf.data(), n, q, 7);
        for (std::size_t i = 0; i < n; ++i) {
          if (buf[i] != byte_at(q, i, 1)) {
            failures.push_back("recv of " + std::to_string(n) + " bytes from rank " + std::to_string(q) + ": byte " +
                               std::to_string(i) + " wrong");
            break;
          }
        }
        for (std::size_t i = 0; i < n; ++i) buf[i] = byte_at(0, i, 2);
        comm.send(buf.data(), n, q, 7);
      }
    }
  }
  expect_all_ranks_pass(failures);
}

TEST(MpiChunks, SendrecvRingWithUnequalSizesDeliversEveryByte) {
  // Rank r sends size(r) bytes to its right neighbour and receives size(r - 1) from its left one;
  // the sizes differ around the ring (in chunks too), and several rounds run back to back so a
  // stray message left by one round would corrupt the next.
  auto& comm = chunked();
  const int p = comm.size(), r = comm.rank();
  const int right = (r + 1) % p, left = (r + p - 1) % p;
  std::vector<std::string> failures;
  for (int round = 0; round < 4; ++round) {
    const auto size = [&](int q) { return static_cast<std::size_t>(((q + round) % p) * 1500 + round * 333); };
    std::vector<unsigned char> out(size(r) + 1), in(size(left) + 1, 0);
    for (std::size_t i = 0; i < size(r); ++i) out[i] = byte_at(r, i, round);
    comm.sendrecv(out.data(), size(r), right, in.data(), size(left), left, 9);
    for (std::size_t i = 0; i < size(left); ++i) {
      if (in[i] != byte_at(left, i, round)) {
        failures.push_back("round " + std::to_string(round) + ": rank " + std::to_string(r) + " byte " +
                           std::to_string(i) + " of " + std::to_string(size(left)) + " from rank " +
                           std::to_string(left) + " wrong");
        break;
      }
    }
  }
  expect_all_ranks_pass(failures);
}

TEST(MpiChunks, AllreduceMatchesTheUnchunkedResult) {
  const int r = whole().rank();
  std::vector<std::string> failures;
  std::vector<unsigned char> input, want, got;
  for (const DataType t : kTypes) {
    for (const ReduceOp op : {ReduceOp::sum, ReduceOp::avg, ReduceOp::max}) {
      for (const std::size_t n : kCounts) {
        const std::size_t bytes = n * comm::size_of(t);
        fill(t, input, n, r);
        want.assign(input.size(), 0);
        whole().allreduce(input.data(), want.data(), n, t, op);
        got.assign(input.size(), 0);
        chunked().allreduce(input.data(), got.data(), n, t, op);
        if (!same(got, want, bytes)) failures.push_back(where("allreduce", t, n, "out-of-place"));
        got = input;
        chunked().allreduce(got.data(), got.data(), n, t, op);
        if (!same(got, want, bytes)) failures.push_back(where("allreduce", t, n, "in-place"));
      }
    }
  }
  expect_all_ranks_pass(failures);
}

TEST(MpiChunks, BroadcastMatchesTheUnchunkedResult) {
  const int p = whole().size(), r = whole().rank();
  std::vector<std::string> failures;
  std::vector<unsigned char> want, got;
  for (const DataType t : kTypes) {
    for (const std::size_t n : kCounts) {
      for (const int root : {0, p - 1}) {
        fill(t, want, n, r == root ? root : p + 1);  // non-roots start from other data
        got = want;
        whole().broadcast(want.data(), n, t, root);
        chunked().broadcast(got.data(), n, t, root);
        if (!same(got, want, n * comm::size_of(t))) failures.push_back(where("broadcast", t, n, "from the root"));
      }
    }
  }
  expect_all_ranks_pass(failures);
}

TEST(MpiChunks, AllgatherAndReduceScatterMatchTheUnchunkedResult) {
  // Above the chunk allgather becomes one chunked broadcast per rank and reduce-scatter one
  // chunked MPI_Reduce per block; both in place (NCCL's convention) and out of place.
  const int p = whole().size(), r = whole().rank();
  const auto up = static_cast<std::size_t>(p), ur = static_cast<std::size_t>(r);
  std::vector<std::string> failures;
  std::vector<unsigned char> mine, all, want, got;
  for (const DataType t : kTypes) {
    const std::size_t es = comm::size_of(t);
    for (const std::size_t n : kCounts) {
      fill(t, mine, n, r);
      want.assign((up * n + 1) * es, 0);
      whole().allgather(mine.data(), want.data(), n, t);
      got.assign(want.size(), 0);
      chunked().allgather(mine.data(), got.data(), n, t);
      if (!same(got, want, up * n * es)) failures.push_back(where("allgather", t, n, "out-of-place"));
      got.assign(want.size(), 0);
      std::memcpy(got.data() + ur * n * es, mine.data(), n * es);
      chunked().allgather(got.data() + ur * n * es, got.data(), n, t);
      if (!same(got, want, up * n * es)) failures.push_back(where("allgather", t, n, "in-place"));

      fill(t, all, up * n, r);
      want.assign((n + 1) * es, 0);
      whole().reduce_scatter(all.data(), want.data(), n, t, ReduceOp::sum);
      got.assign(want.size(), 0);
      chunked().reduce_scatter(all.data(), got.data(), n, t, ReduceOp::sum);
      if (!same(got, want, n * es)) failures.push_back(where("reduce-scatter", t, n, "out-of-place"));
      std::vector<unsigned char> in_place = all;
      chunked().reduce_scatter(in_place.data(), in_place.data() + ur * n * es, n, t, ReduceOp::sum);
      if (std::memcmp(in_place.data() + ur * n * es, want.data(), n * es) != 0) {
        failures.push_back(where("reduce-scatter", t, n, "in-place"));
      }
    }
  }
  expect_all_ranks_pass(failures);
}

TEST(MpiChunks, RejectsAChunkMpiCannotCount) {
  EXPECT_THROW(MpiCommunicator(0), Error);
  EXPECT_THROW(MpiCommunicator(std::size_t{1} << 31), Error);
}

}  // namespace
}  // namespace scalelab::test
