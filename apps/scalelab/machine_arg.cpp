#include "machine_arg.h"

#include <cstdio>

#include "topo/catalog.h"

namespace scalelab::cli {

topo::Machine load_machine(const std::string& name_or_path) {
  topo::Machine m = topo::resolve_machine(name_or_path);
  for (const auto& w : m.warnings) std::fprintf(stderr, "warning: %s\n", w.c_str());
  return m;
}

}  // namespace scalelab::cli
