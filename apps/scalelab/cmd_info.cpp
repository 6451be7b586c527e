// `scalelab info`: what this build can do and where this process sits, in the spirit of
// `horovodrun --check-build`: version, backends compiled with their library versions (MPI,
// NCCL, CUDA), devices found or why none were, the CPU, the collective algorithms, and rank /
// size / local rank / local size as the launcher (mpirun, srun, torchrun-style) left them in the
// environment. It does not start MPI. --json FILE writes the same as a "scalelab.info" record
// (under a launcher with several ranks, rank 0 writes it).
#include <mpi.h>

#include <cstdio>
#include <iostream>
#include <string>

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

constexpr int kInfoSchemaVersion = 1;

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
    write_json_file(json_path, doc);
  }
  return 0;
}

}  // namespace scalelab::cli
