// The algorithm table (algorithm.h): names, parsing and construction. Adding an algorithm is one
// file (its class, cost formula and descriptor) plus one row here. Also the shared preamble of
// the point-to-point algorithms.
#include "collectives/algorithm.h"

#include <array>
#include <string>

#include "collectives/algorithm_base.h"
#include "core/error.h"

namespace scalelab::collectives {

// Defined in each algorithm's own file.
extern const AlgorithmDescriptor kAllreduceLibrary, kBroadcastLibrary, kAllgatherLibrary, kReduceScatterLibrary;
extern const AlgorithmDescriptor kAllreduceRing, kAllreduceTree, kAllreduceTreePipelined,
    kAllreduceRecursiveDoubling, kAllreduceRabenseifner, kAllreduceNaive, kAllreduceShm;
extern const AlgorithmDescriptor kBroadcastNaive, kBroadcastTree, kBroadcastRing;
extern const AlgorithmDescriptor kAllgatherRing, kAllgatherRecursiveDoubling;
extern const AlgorithmDescriptor kReduceScatterRing;

namespace {

constexpr std::array kTable{
    &kAllreduceLibrary,
    &kAllreduceRing,
    &kAllreduceTree,
    &kAllreduceTreePipelined,
    &kAllreduceRecursiveDoubling,
    &kAllreduceRabenseifner,
    &kAllreduceNaive,
    &kAllreduceShm,
    &kBroadcastLibrary,
    &kBroadcastNaive,
    &kBroadcastTree,
    &kBroadcastRing,
    &kAllgatherLibrary,
    &kAllgatherRing,
    &kAllgatherRecursiveDoubling,
    &kReduceScatterLibrary,
    &kReduceScatterRing,
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
  throw_parameter(ErrorKind::usage, std::string(what),
                  ": unknown collective '" + std::string(text) + "'; use one of allreduce, broadcast, allgather, reduce-scatter");
}

std::span<const AlgorithmDescriptor* const> algorithm_table() { return kTable; }
std::span<const Collective> all_collectives() { return kCollectives; }

std::vector<std::string> algorithm_names(Collective c) {
  std::vector<std::string> names;
  for (const AlgorithmDescriptor* d : kTable) {
    if (d->collective == c) names.emplace_back(d->name);
  }
  return names;
}

std::string algorithm_list(Collective c) {
  std::string list;
  for (const auto& n : algorithm_names(c)) list += (list.empty() ? "" : ", ") + n;
  return list;
}

const AlgorithmDescriptor& find_algorithm(Collective c, std::string_view name, std::string_view parameter) {
  for (const AlgorithmDescriptor* d : kTable) {
    if (d->collective == c && d->name == name) return *d;
  }
  throw_parameter(ErrorKind::usage, std::string(parameter),
                  ": unknown " + std::string(name_of(c)) + " algorithm '" + std::string(name) + "'; use one of " +
                      algorithm_list(c));
}

std::unique_ptr<Algorithm> make_algorithm(Collective c, std::string_view name, std::string_view parameter) {
  return find_algorithm(c, name, parameter).make();
}

void PointToPointAlgorithm::run(comm::Communicator& comm, const void* send, void* recv, std::size_t count,
                                comm::DataType type, comm::ReduceOp op, int root) {
  if (comm.memory_space() != comm::MemorySpace::host) {
    throw_parameter(ErrorKind::usage, "algorithm",
                    std::string(name()) + ": this algorithm reduces and copies on the CPU and needs host memory, "
                    "but backend " + comm.backend() + " keeps buffers on the GPU; use the library algorithm");
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
