// The workload catalog: data/workloads/*.json compiled in (workload_catalog_data.cpp, written at
// build time by embed_files.cmake), and workload files given by path (see workload.h).
#include <algorithm>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "sim/workload.h"

namespace scalelab::sim {

namespace detail {
struct EmbeddedFile {
  const char* name;
  const char* text;
};
const EmbeddedFile* embedded_workloads(std::size_t& count);  // workload_catalog_data.cpp
}  // namespace detail

namespace {

Workload parse_text(const std::string& text, const std::string& where) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    throw_input(where + ": not valid JSON (" + std::string(e.what()) + "); fix the syntax (docs/workload-format.md)");
  }
  return workload_from_json(j, where);
}

Workload load_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw_parameter(ErrorKind::input, "workload", path + ": cannot read this file; check the path, or give a catalog name");
  std::ostringstream text;
  text << in.rdbuf();
  return parse_text(text.str(), path);
}

}  // namespace

std::vector<std::string> workload_names() {
  std::size_t n = 0;
  const auto* items = detail::embedded_workloads(n);
  std::vector<std::string> names;
  for (std::size_t i = 0; i < n; ++i) names.emplace_back(items[i].name);
  std::sort(names.begin(), names.end());
  return names;
}

Workload resolve_workload(const std::string& name) {
  if (name.find('/') != std::string::npos || name.ends_with(".json")) return load_file(name);
  std::size_t n = 0;
  const auto* items = detail::embedded_workloads(n);
  for (std::size_t i = 0; i < n; ++i) {
    if (name == items[i].name) return parse_text(items[i].text, std::string("catalog:") + items[i].name);
  }
  std::string known;
  for (const auto& k : workload_names()) known += (known.empty() ? "" : ", ") + k;
  throw_parameter(ErrorKind::input, "workload", "'" + name + "': not a catalog workload or a file; use one of " + known +
                                                    ", or a path to a workload file (docs/workload-format.md)");
}

}  // namespace scalelab::sim
