// Catalog lookup and GPU selection (see catalog.h). The file texts come from catalog_data.cpp,
// generated at build time from data/machines/*.json by embed_catalog.cmake.
#include "topo/catalog.h"

#include <charconv>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/text.h"
#include "core/embedded_files.h"
#include "topo/detect.h"
#include "topo/machine_file.h"

namespace scalelab::topo {

namespace detail {
const EmbeddedFile* embedded_machines(std::size_t& count);  // generated (cmake/EmbedFiles.cmake)
}  // namespace detail

namespace {

Machine parse_embedded(const EmbeddedFile& e) {
  const std::string origin = std::string("catalog:") + e.name;
  return parse_machine(nlohmann::json::parse(e.text), origin);
}

std::string names_list() {
  std::string out = "this";
  for (const auto& e : catalog()) out += ", " + e.name;
  return out;
}

}  // namespace

std::vector<CatalogEntry> catalog() {
  std::size_t n = 0;
  const auto* items = detail::embedded_machines(n);
  std::vector<CatalogEntry> out;
  for (std::size_t i = 0; i < n; ++i) {
    const auto j = nlohmann::json::parse(items[i].text);
    out.push_back({items[i].name, j.value("title", std::string())});
  }
  return out;
}

Machine resolve_machine(const std::string& name) {
  if (name == "this" || name.empty()) return detect_this_machine();
  if (names_a_file(name)) return load_machine_file(name);
  if (const EmbeddedFile* f = find_embedded(&detail::embedded_machines, name)) return parse_embedded(*f);
  throw_parameter(ErrorKind::input, "machine", name + ": not a catalog machine or a file; use one of " + names_list() +
              ", or a path to a machine file (docs/machine-format.md)");
}

GpuSelection select_gpus(const Machine& m, const std::string& spec) {
  const auto all = m.gpus();
  GpuSelection s;
  if (spec.empty()) {
    s.gpus = all;
    s.total = static_cast<int>(all.size());
    return s;
  }
  if (spec.find(',') == std::string::npos) {
    int count = 0;
    auto [p, ec] = std::from_chars(spec.data(), spec.data() + spec.size(), count);
    if (ec != std::errc() || p != spec.data() + spec.size() || count < 1) {
      throw_parameter(ErrorKind::usage, "gpus", spec + ": give a GPU count (8) or a list of GPU positions (0,3)");
    }
    const int per_node = static_cast<int>(all.size());
    if (per_node == 0) throw_parameter(ErrorKind::usage, "gpus", spec + ": " + m.name + " has no GPUs");
    if (count > per_node * m.nodes) {
      throw_parameter(ErrorKind::usage, "gpus", spec + ": " + m.name + " has " + std::to_string(per_node * m.nodes) + " GPUs (" +
                  std::to_string(m.nodes) + " node(s) x " + std::to_string(per_node) + ")");
    }
    if (count <= per_node) {
      s.gpus.assign(all.begin(), all.begin() + count);
      s.nodes = 1;
    } else {
      if (count % per_node != 0) {
        throw_parameter(ErrorKind::usage, "gpus", spec + ": across nodes, give a multiple of the " + std::to_string(per_node) + " GPUs per node");
      }
      s.gpus = all;
      s.nodes = count / per_node;
    }
    s.total = count;
    return s;
  }
  if (all.empty()) throw_parameter(ErrorKind::usage, "gpus", spec + ": " + m.name + " has no GPUs to select; leave the selection out");
  for (const auto& item : split_list(spec)) {
    int pos = -1;
    auto [p, ec] = std::from_chars(item.data(), item.data() + item.size(), pos);
    if (ec != std::errc() || p != item.data() + item.size() || pos < 0 || pos >= static_cast<int>(all.size())) {
      throw_parameter(ErrorKind::usage, "gpus", spec + ": '" + item + "' is not a GPU position of " + m.name + " (0.." +
                  std::to_string(static_cast<int>(all.size()) - 1) + ")");
    }
    for (int g : s.gpus) {
      if (g == all[pos]) throw_parameter(ErrorKind::usage, "gpus", spec + ": GPU " + item + " is listed twice");
    }
    s.gpus.push_back(all[pos]);
  }
  s.total = static_cast<int>(s.gpus.size());
  return s;
}

}  // namespace scalelab::topo
