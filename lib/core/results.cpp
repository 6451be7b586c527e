#include "core/results.h"

#include <cstdio>
#include <ctime>
#include <fstream>

#include "core/atomic_file.h"
#include "core/error.h"
#include "core/file_check.h"
#include "core/json_text.h"
#include "core/machine_info.h"

namespace scalelab {

std::string utc_timestamp() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

nlohmann::json make_envelope(const std::string& kind, int schema_version, const std::vector<std::string>& command) {
  nlohmann::json j;
  j["schema"] = "scalelab." + kind;
  j["schema_version"] = schema_version;
  j["created"] = utc_timestamp();
  j["command"] = command;
  j["machine"] = read_machine_info();
  return j;
}

void write_json_file(const std::string& path, const nlohmann::json& doc) {
  write_file_atomically(path, doc.dump(1) + "\n", "json");
}

nlohmann::json read_json_file(const std::string& path) {
  check_input_file(path, "JSON file");
  std::ifstream in(path);
  if (!in) throw_input(path + ": cannot open; check the path");
  try {
    return parse_json_text(in);
  } catch (const JsonTextError& e) {
    throw_input(path + ": not valid JSON (" + std::string(e.what()) + ")");
  }
}

}  // namespace scalelab
