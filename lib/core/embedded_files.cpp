// The shared lookups of the compiled-in catalogs (embedded_files.h).
#include "core/embedded_files.h"

#include <algorithm>

namespace scalelab {

std::vector<std::string> embedded_names(EmbeddedFiles files) {
  std::size_t n = 0;
  const EmbeddedFile* items = files(n);
  std::vector<std::string> names;
  for (std::size_t i = 0; i < n; ++i) names.emplace_back(items[i].name);
  std::sort(names.begin(), names.end());
  return names;
}

const EmbeddedFile* find_embedded(EmbeddedFiles files, std::string_view name) {
  std::size_t n = 0;
  const EmbeddedFile* items = files(n);
  for (std::size_t i = 0; i < n; ++i) {
    if (name == items[i].name) return &items[i];
  }
  return nullptr;
}

bool names_a_file(std::string_view name_or_path) {
  return name_or_path.find('/') != std::string_view::npos || name_or_path.ends_with(".json");
}

}  // namespace scalelab
