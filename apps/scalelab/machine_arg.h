// A --machine argument resolved for a command: a catalog name, a machine file or "this", with what
// the reader had to guess (a format-1 file's GPU architectures) printed to stderr as warnings.
//
//   const topo::Machine m = load_machine(vm["machine"].as<std::string>());
#pragma once
#include <string>

#include "topo/machine.h"

namespace scalelab::cli {

[[nodiscard]] topo::Machine load_machine(const std::string& name_or_path);

}  // namespace scalelab::cli
