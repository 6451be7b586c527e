// `scalelab info`: what this build can do and where this process sits, in the spirit of
// `horovodrun --check-build`: version, backends compiled with their library versions (MPI,
// NCCL, CUDA), devices found or why none were, the CPU, the collective algorithms, and rank /
// size / local rank / local size as the launcher (mpirun, srun, torchrun-style) left them in the
// environment. Under a launcher with several ranks it starts MPI only to gather every rank's
// place and hardware, and rank 0 prints one block for the job, then one line per rank with what
// differs from rank 0 (host, CPU, GPUs, BLAS); the other ranks print nothing. --json FILE writes
// the same as a "scalelab.info" record (rank 0 writes it).
#include <mpi.h>

#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "collectives/algorithm.h"
#include "nn/blas.h"
#include "comm/factory.h"
#include "commands.h"
#include "core/launch_env.h"
#include "core/machine_info.h"
#include "core/results.h"
#include "gpu_probe.h"

namespace scalelab::cli {
namespace {

// 2: ranks[].pid is an integer (a string in 1), as in the other records.
constexpr int kInfoSchemaVersion = 2;

std::string mpi_library_version() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int len = 0;
  MPI_Get_library_version(text, &len);  // callable before MPI_Init
  std::string s(text, static_cast<std::size_t>(len));
  const auto cut = s.find_first_of(",\n");
  return s.substr(0, cut);
}

const char* mark(bool on) { return on ? "[X]" : "[ ]"; }

std::string one_decimal(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

// What may differ from one rank to the next, as "key=value" fields.
struct RankFacts {
  int rank = 0;
  std::vector<std::pair<std::string, std::string>> fields;
};

RankFacts facts_of(const LaunchEnv& env, const MachineInfo& m, const GpuProbe& gpu) {
  RankFacts f;
  f.rank = env.rank;
  std::string gpus;
  for (const auto& d : gpu.devices) gpus += (gpus.empty() ? "" : ", ") + ("cuda:" + std::to_string(d.index) + " " + d.name);
  f.fields = {{"host", m.hostname},
              {"local rank", std::to_string(env.local_rank) + " of " + std::to_string(env.local_size)},
              {"pid", std::to_string(::getpid())},
              {"CPU", m.cpu_model + ", " + std::to_string(m.logical_cpus) + " logical CPUs, " + one_decimal(m.memory_gib) + " GiB"},
              {"GPUs", gpus.empty() ? "none" : gpus},
              {"BLAS", nn::blas_description()}};
  return f;
}

// Every rank's facts at rank 0 (one gather of "key\x1fvalue\x1e..." texts); empty elsewhere.
std::vector<RankFacts> gather_facts(const RankFacts& mine, int size) {
  std::string text;
  for (const auto& [k, v] : mine.fields) text += k + '\x1f' + v + '\x1e';
  int len = static_cast<int>(text.size());
  std::vector<int> lens(static_cast<std::size_t>(size));
  MPI_Gather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::vector<int> offsets(static_cast<std::size_t>(size));
  int total = 0;
  for (int r = 0; r < size; ++r) {
    offsets[static_cast<std::size_t>(r)] = total;
    total += lens[static_cast<std::size_t>(r)];
  }
  std::string all(rank == 0 ? static_cast<std::size_t>(total) : 0, '\0');
  MPI_Gatherv(text.data(), len, MPI_CHAR, all.data(), lens.data(), offsets.data(), MPI_CHAR, 0, MPI_COMM_WORLD);
  std::vector<RankFacts> out;
  if (rank != 0) return out;
  for (int r = 0; r < size; ++r) {
    RankFacts f;
    f.rank = r;
    const std::string t = all.substr(static_cast<std::size_t>(offsets[static_cast<std::size_t>(r)]),
                                     static_cast<std::size_t>(lens[static_cast<std::size_t>(r)]));
    std::size_t at = 0;
    while (at < t.size()) {
      const std::size_t sep = t.find('\x1f', at), end = t.find('\x1e', at);
      if (sep == std::string::npos || end == std::string::npos) break;
      f.fields.emplace_back(t.substr(at, sep - at), t.substr(sep + 1, end - sep - 1));
      at = end + 1;
    }
    out.push_back(std::move(f));
  }
  return out;
}

// "rank 1: host b, local rank 0 of 1, pid 42; GPUs: none" (host, local rank and pid always;
// the rest only where they differ from rank 0's).
std::string rank_line(const RankFacts& f, const RankFacts& first) {
  std::string line = "    rank " + std::to_string(f.rank) + ":";
  for (std::size_t i = 0; i < f.fields.size(); ++i) {
    const auto& [k, v] = f.fields[i];
    const bool always = k == "host" || k == "local rank" || k == "pid";
    if (!always && i < first.fields.size() && first.fields[i].second == v) continue;
    line += (line.back() == ':' ? " " : ", ") + k + " " + v;
  }
  return line;
}

}  // namespace

int cmd_info(const Args& args) {
  po::options_description opts("options");
  opts.add_options()("json", po::value<std::string>()->default_value(""), "also write the report as JSON to this file");
  const auto vm = parse(args, "scalelab info [--json FILE]", opts);
  if (!vm) return 0;
  check_output_files(*vm, {"json"});

  const MachineInfo machine = read_machine_info();
  const LaunchEnv env = read_launch_env();
  const GpuProbe gpu = probe_gpus();
  // Several ranks: one block, from rank 0, with a line per rank (the others stay quiet).
  std::vector<RankFacts> ranks;
  if (env.size > 1 && env.launcher != "torchrun") {
    MPI_Init(nullptr, nullptr);
    int size = 1;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    ranks = gather_facts(facts_of(env, machine, gpu), size);
    MPI_Finalize();
    if (env.rank != 0) return 0;
  }
  const std::string mpi_version = mpi_library_version();
  const std::string mpi_standard = std::to_string(MPI_VERSION) + "." + std::to_string(MPI_SUBVERSION);
  bool nccl_backend = false;
  for (const auto& b : comm::backend_names()) nccl_backend = nccl_backend || b == "nccl";

  std::cout << "scalelab " << SCALELAB_VERSION << "\n\nBackends (--backend):\n"
            << "    " << mark(true) << " mpi      " << mpi_version << " (MPI " << mpi_standard << ")\n"
            << "    " << mark(nccl_backend) << " nccl     "
            << (gpu.nccl_built ? "NCCL " + gpu.nccl_version : "not built: no CUDA toolkit with NCCL at configure time")
            << "\n    " << mark(true) << " local    threads in one process (tests and lessons)\n"
            << "GPU support:\n    " << mark(gpu.cuda_built) << " CUDA     "
            << (gpu.cuda_built ? "runtime " + gpu.cuda_runtime_version +
                                     (gpu.cuda_driver_version.empty() ? ", no driver" : ", driver " + gpu.cuda_driver_version)
                               : std::string("not built"))
            << "\nDevices:\n";
  if (gpu.devices.empty()) std::cout << "    none: " << gpu.no_device_reason << "\n";
  for (const auto& d : gpu.devices) {
    std::printf("    cuda:%d %s, %.1f GiB, compute capability %s, PCI %s\n", d.index, d.name.c_str(), d.memory_gib,
                d.compute_capability.c_str(), d.pci_bus_id.c_str());
  }
  std::fflush(stdout);
  std::cout << "CPU:\n    " << machine.cpu_model << ", " << machine.logical_cpus << " logical CPUs, "
            << one_decimal(machine.memory_gib) << " GiB memory, " << machine.os << " on " << machine.hostname << "\n"
            << "Matrix products (nn):\n    " << nn::blas_description() << "\n"
            << "Collective algorithms (--algo):\n";
  nlohmann::json algorithms;
  for (const auto c : collectives::all_collectives()) {
    const auto names = collectives::algorithm_names(c);
    std::string line;
    for (const auto& n : names) line += " " + n;
    std::cout << "    " << collectives::name_of(c) << ":" << line << "\n";
    algorithms[std::string(collectives::name_of(c))] = names;
  }
  std::cout << "Launch (from the environment):\n    launcher " << env.launcher << ", rank " << env.rank << " of "
            << env.size << ", local rank " << env.local_rank << " of " << env.local_size << std::endl;
  if (!ranks.empty()) {
    std::cout << "Ranks (what differs from rank 0 besides host, local rank and pid):\n";
    for (const auto& f : ranks) std::cout << rank_line(f, ranks.front()) << "\n";
    std::cout << std::flush;
  }

  const std::string json_path = (*vm)["json"].as<std::string>();
  if (!json_path.empty() && env.rank == 0) {
    nlohmann::json doc = make_envelope("info", kInfoSchemaVersion, args.full);
    doc["backends"] = {
        {"mpi", {{"built", true}, {"library_version", mpi_version}, {"standard", mpi_standard}}},
        {"nccl", {{"built", gpu.nccl_built}, {"version", gpu.nccl_built ? nlohmann::json(gpu.nccl_version) : nlohmann::json(nullptr)}}},
        {"local", {{"built", true}}}};
    doc["cuda"] = {{"built", gpu.cuda_built},
                   {"runtime_version", gpu.cuda_built ? nlohmann::json(gpu.cuda_runtime_version) : nlohmann::json(nullptr)},
                   {"driver_version", gpu.cuda_driver_version.empty() ? nlohmann::json(nullptr) : nlohmann::json(gpu.cuda_driver_version)}};
    nlohmann::json devices = nlohmann::json::array();
    for (const auto& d : gpu.devices) {
      devices.push_back({{"index", d.index}, {"name", d.name}, {"memory_gib", d.memory_gib},
                         {"compute_capability", d.compute_capability}, {"pci_bus_id", d.pci_bus_id}});
    }
    doc["devices"] = devices;
    doc["no_device_reason"] = gpu.devices.empty() ? nlohmann::json(gpu.no_device_reason) : nlohmann::json(nullptr);
    doc["algorithms"] = algorithms;
    doc["blas"] = nn::blas_description();
    doc["launch"] = {{"launcher", env.launcher}, {"rank", env.rank}, {"size", env.size},
                     {"local_rank", env.local_rank}, {"local_size", env.local_size}};
    nlohmann::json per_rank = nlohmann::json::array();
    for (const auto& f : ranks) {
      nlohmann::json r{{"rank", f.rank}};
      for (const auto& [k, v] : f.fields) {
        std::string key = k;  // "local rank" -> "local_rank", "GPUs" -> "gpus"
        for (char& c : key) c = c == ' ' ? '_' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        r[key] = key == "pid" ? nlohmann::json(std::stoll(v)) : nlohmann::json(v);
      }
      per_rank.push_back(r);
    }
    doc["ranks"] = per_rank;
    write_json_file(json_path, doc);
  }
  return 0;
}

}  // namespace scalelab::cli
