#include "core/machine_info.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

namespace scalelab {

MachineInfo read_machine_info() {
  MachineInfo m;
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) == 0) m.hostname = host;
  std::ifstream cpu("/proc/cpuinfo");
  for (std::string line; std::getline(cpu, line);) {
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) m.cpu_model = line.substr(line.find_first_not_of(" \t", colon + 1));
      break;
    }
  }
  m.logical_cpus = static_cast<int>(std::thread::hardware_concurrency());
  std::ifstream mem("/proc/meminfo");
  for (std::string key; mem >> key;) {
    if (key == "MemTotal:") {
      double kib = 0;
      mem >> kib;
      m.memory_gib = kib / (1024.0 * 1024.0);
      break;
    }
  }
  utsname u{};
  if (uname(&u) == 0) m.os = std::string(u.sysname) + " " + u.release + " " + u.machine;
#if defined(__clang__)
  m.compiler = "clang " __clang_version__;
#elif defined(__GNUC__)
  m.compiler = "gcc " __VERSION__;
#endif
  m.scalelab_version = SCALELAB_VERSION;
  return m;
}

void to_json(nlohmann::json& j, const MachineInfo& m) {
  j = nlohmann::json{{"hostname", m.hostname},   {"cpu_model", m.cpu_model}, {"logical_cpus", m.logical_cpus},
                     {"memory_gib", m.memory_gib}, {"os", m.os},           {"compiler", m.compiler},
                     {"scalelab_version", m.scalelab_version}};
}

}  // namespace scalelab
