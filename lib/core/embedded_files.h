// Data files compiled into the binary (cmake/EmbedFiles.cmake writes, for each catalog, a source
// with one function returning its files as {name, text} pairs): the machine catalog
// (data/machines), the workload catalog (data/workloads) and the device catalog (data/devices).
// The catalogs share the lookups here.
//
//   const EmbeddedFile* f = find_embedded(&detail::embedded_workloads, "resnet50");
#pragma once
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace scalelab {

struct EmbeddedFile {
  const char* name;  // the file's stem: "resnet50"
  const char* text;  // its contents
};
// The function a generated source defines: the files, and their number in `count`.
using EmbeddedFiles = const EmbeddedFile* (*)(std::size_t& count);

// The files' names, sorted.
[[nodiscard]] std::vector<std::string> embedded_names(EmbeddedFiles files);
// The file called `name`, or null.
[[nodiscard]] const EmbeddedFile* find_embedded(EmbeddedFiles files, std::string_view name);
// Whether a name given where a catalog name or a file may stand is a file: it holds a '/' or
// ends in ".json".
[[nodiscard]] bool names_a_file(std::string_view name_or_path);

}  // namespace scalelab
