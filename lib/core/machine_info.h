// What a measurement ran on, recorded with every result: host, CPU model, cores, memory,
// operating system, compiler and scalelab version.
#pragma once
#include <string>

#include <nlohmann/json_fwd.hpp>

namespace scalelab {

struct MachineInfo {
  std::string hostname;
  std::string cpu_model;
  int logical_cpus = 0;
  double memory_gib = 0.0;
  std::string os;
  std::string compiler;
  std::string scalelab_version;
};

[[nodiscard]] MachineInfo read_machine_info();
void to_json(nlohmann::json& j, const MachineInfo& m);

}  // namespace scalelab
