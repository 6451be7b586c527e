// The machine catalog: the files of data/machines/ (built into the binary, so scalelab finds them
// wherever it runs), plus "this" (the machine scalelab runs on, detected: topo/detect.h).
//
//   Machine m = resolve_machine("dgx1");          // catalog name
//   Machine f = resolve_machine("my-node.json");  // a file (any name containing '/' or ending .json)
#pragma once
#include <string>
#include <vector>

#include "topo/machine.h"

namespace scalelab::topo {

struct CatalogEntry {
  std::string name;   // file stem: "dgx1"
  std::string title;  // its "title"
};

[[nodiscard]] std::vector<CatalogEntry> catalog();
// A catalog name, "this", or a path to a machine file. Unknown names are input errors listing the catalog.
[[nodiscard]] Machine resolve_machine(const std::string& name_or_path);

// Selects GPUs: "" (all of one node), "8" (a count: the first 8, across nodes when more than one
// node's worth), or "0,3,5" (device positions within one node). Returns device indices of one
// node and sets `nodes` to how many nodes the selection spans.
struct GpuSelection {
  std::vector<int> gpus;  // device indices within a node (all of the node's GPUs when nodes > 1)
  int nodes = 1;
  int total = 0;          // GPUs in all
};
[[nodiscard]] GpuSelection select_gpus(const Machine& m, const std::string& spec);

}  // namespace scalelab::topo
