// A --machine argument resolved for a command: a catalog name, a machine file or "this", with what
// the reader had to guess (a format-1 file's GPU architectures) printed to stderr as warnings; and
// the --gpus selection that goes with it.
//
//   const topo::Machine m = load_machine(vm["machine"].as<std::string>());
//   const auto sel = topo::select_gpus(m, gpus_arg(vm));
#pragma once
#include <string>

#include <boost/program_options.hpp>

#include "topo/machine.h"

namespace scalelab::cli {

[[nodiscard]] topo::Machine load_machine(const std::string& name_or_path);
// --gpus as given (empty when left out: the command's default selection); given empty (--gpus ''),
// a usage error naming it, not the default taken silently.
[[nodiscard]] std::string gpus_arg(const boost::program_options::variables_map& vm);

}  // namespace scalelab::cli
