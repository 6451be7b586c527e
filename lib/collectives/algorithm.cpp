// The algorithm table (algorithm.h): names, parsing and construction. Adding an algorithm is one
// file plus one line here. Also the shared preamble of the point-to-point algorithms.
#include "collectives/algorithm.h"

#include <array>
#include <string>

#include "collectives/algorithm_base.h"
#include "core/error.h"

namespace scalelab::collectives {
namespace {

struct Entry {
  Collective collective;
  std::string_view name;
  std::unique_ptr<Algorithm> (*make)();
};

std::unique_ptr<Algorithm> library_allreduce() { return make_library(Collective::allreduce); }
std::unique_ptr<Algorithm> library_broadcast() { return make_library(Collective::broadcast); }
std::unique_ptr<Algorithm> library_allgather() { return make_library(Collective::allgather); }
std::unique_ptr<Algorithm> library_reduce_scatter() { return make_library(Collective::reduce_scatter); }

constexpr std::array kTable{
    Entry{Collective::allreduce, "library", &library_allreduce},
    Entry{Collective::allreduce, "ring", &make_allreduce_ring},
    Entry{Collective::allreduce, "tree", &make_allreduce_tree},
    Entry{Collective::allreduce, "tree_pipelined", &make_allreduce_tree_pipelined},
    Entry{Collective::allreduce, "recursive_doubling", &make_allreduce_recursive_doubling},
    Entry{Collective::allreduce, "rabenseifner", &make_allreduce_rabenseifner},
    Entry{Collective::allreduce, "naive", &make_allreduce_naive},
    Entry{Collective::broadcast, "library", &library_broadcast},
    Entry{Collective::broadcast, "naive", &make_broadcast_naive},
    Entry{Collective::broadcast, "tree", &make_broadcast_tree},
    Entry{Collective::broadcast, "ring", &make_broadcast_ring},
    Entry{Collective::allgather, "library", &library_allgather},
    Entry{Collective::allgather, "ring", &make_allgather_ring},
    Entry{Collective::allgather, "recursive_doubling", &make_allgather_recursive_doubling},
    Entry{Collective::reduce_scatter, "library", &library_reduce_scatter},
    Entry{Collective::reduce_scatter, "ring", &make_reduce_scatter_ring},
};

constexpr std::array kCollectives{Collective::allreduce, Collective::broadcast, Collective::allgather,
                                  Collective::reduce_scatter};

}  // namespace

std::string_view name_of(Collective c) {
  switch (c) {
    case Collective::allreduce: return "allreduce";
    case Collective::broadcast: return "broadcast";
    case Collective::allgather: return "allgather";
    case Collective::reduce_scatter: return "reduce-scatter";
  }
  return "?";
}

Collective parse_collective(std::string_view text, std::string_view what) {
  for (const Collective c : kCollectives) {
    if (text == name_of(c)) return c;
  }
  if (text == "reduce_scatter" || text == "reducescatter") return Collective::reduce_scatter;
  throw_usage(std::string(what) + ": unknown collective '" + std::string(text) +
              "'; use one of allreduce, broadcast, allgather, reduce-scatter");
}

std::vector<std::string> algorithm_names(Collective c) {
  std::vector<std::string> names;
  for (const Entry& e : kTable) {
    if (e.collective == c) names.emplace_back(e.name);
  }
  return names;
}

std::unique_ptr<Algorithm> make_algorithm(Collective c, std::string_view name, std::string_view what) {
  for (const Entry& e : kTable) {
    if (e.collective == c && e.name == name) return e.make();
  }
  std::string valid;
  for (const auto& n : algorithm_names(c)) valid += (valid.empty() ? "" : ", ") + n;
  throw_usage(std::string(what) + ": unknown " + std::string(name_of(c)) + " algorithm '" + std::string(name) +
              "'; use one of " + valid);
}

void PointToPointAlgorithm::run(comm::Communicator& comm, const void* send, void* recv, std::size_t count,
                                comm::DataType type, comm::ReduceOp op, int root) {
  if (comm.memory_space() != comm::MemorySpace::host) {
    throw_usage("--algo " + std::string(name()) + ": this algorithm reduces and copies on the CPU and needs host "
                "memory, but backend " + comm.backend() + " keeps buffers on the GPU; use --algo library");
  }
  if (count == 0) return;
  if (comm.size() == 1) {
    comm.local_copy(recv, send, count * comm::size_of(type));  // no-op in place (recv == send)
    return;
  }
  exchange(comm, send, recv, count, type, op, root);
}

double busbw_factor(Collective c, int nranks) {
  const double n = nranks;
  switch (c) {
    case Collective::allreduce: return 2.0 * (n - 1.0) / n;
    case Collective::allgather:
    case Collective::reduce_scatter: return (n - 1.0) / n;
    case Collective::broadcast: return 1.0;
  }
  return 1.0;
}

}  // namespace scalelab::collectives
