#include "machine_arg.h"

#include <cstdio>

#include "core/error.h"
#include "topo/catalog.h"

namespace scalelab::cli {

topo::Machine load_machine(const std::string& name_or_path) {
  topo::Machine m = topo::resolve_machine(name_or_path);
  for (const auto& w : m.warnings) std::fprintf(stderr, "warning: %s\n", w.c_str());
  return m;
}

std::string gpus_arg(const boost::program_options::variables_map& vm) {
  const std::string gpus = vm["gpus"].as<std::string>();
  if (gpus.empty() && !vm["gpus"].defaulted()) {
    throw_usage("--gpus '': give GPU positions (0,3) or a count (4), or leave it out for the default");
  }
  return gpus;
}

}  // namespace scalelab::cli
