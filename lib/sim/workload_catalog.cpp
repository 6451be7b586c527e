// The workload catalog: data/workloads/*.json compiled in (workload_catalog_data.cpp, written at
// build time by embed_files.cmake), and workload files given by path (see workload.h).
#include <algorithm>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/embedded_files.h"
#include "core/error.h"
#include "core/file_check.h"
#include "core/json_text.h"
#include "sim/workload.h"

namespace scalelab::sim {

namespace detail {
const EmbeddedFile* embedded_workloads(std::size_t& count);  // generated (cmake/EmbedFiles.cmake)
}  // namespace detail

namespace {

Workload parse_text(const std::string& text, const std::string& where) {
  nlohmann::json j;
  try {
    j = parse_json_text(text);
  } catch (const JsonTextError& e) {
    throw_input(where + ": not valid JSON (" + std::string(e.what()) + "); fix the syntax (docs/workload-format.md)");
  }
  return workload_from_json(j, where);
}

Workload load_file(const std::string& path) {
  check_input_file(path, "workload file", "workload");
  std::ifstream in(path);
  if (!in) throw_parameter(ErrorKind::input, "workload", path + ": cannot read this file; check the path, or give a catalog name");
  std::ostringstream text;
  text << in.rdbuf();
  return parse_text(text.str(), path);
}

}  // namespace

std::vector<std::string> workload_names() { return embedded_names(&detail::embedded_workloads); }

Workload resolve_workload(const std::string& name) {
  if (names_a_file(name)) return load_file(name);
  if (const EmbeddedFile* f = find_embedded(&detail::embedded_workloads, name)) {
    return parse_text(f->text, std::string("catalog:") + f->name);
  }
  std::string known;
  for (const auto& k : workload_names()) known += (known.empty() ? "" : ", ") + k;
  throw_parameter(ErrorKind::input, "workload", "'" + name + "': not a catalog workload or a file; use one of " + known +
                                                    ", or a path to a workload file (docs/workload-format.md)");
}

}  // namespace scalelab::sim
