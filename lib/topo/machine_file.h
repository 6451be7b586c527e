// Reading and checking machine files (format: docs/machine-format.md). Every problem is an input
// error of one line naming the file, the entry and what is wrong, e.g.
//   "bad.json: links[3] (gpu0-gpu9): 'gpu9' is not a device or switch of this machine; ..."
#pragma once
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "topo/machine.h"

namespace scalelab::topo {

// Parses a machine description; `origin` names it in errors (a path, or "catalog:dgx1").
[[nodiscard]] Machine parse_machine(const nlohmann::json& doc, const std::string& origin);
// Reads and parses a machine file.
[[nodiscard]] Machine load_machine_file(const std::string& path);
// The description as JSON again (what `scalelab topo --json` embeds).
[[nodiscard]] nlohmann::json to_json(const Machine& m);

}  // namespace scalelab::topo
