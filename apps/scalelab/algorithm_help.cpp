// algorithms_help (algorithm_help.h).
#include "algorithm_help.h"

#include <fmt/format.h>

namespace scalelab::cli {

std::string algorithms_help(std::optional<collectives::Collective> only) {
  std::string s = "algorithms (--algo):\n";
  for (const collectives::Collective c : collectives::all_collectives()) {
    if (only && c != *only) continue;
    if (!only) s += fmt::format("  {}:\n", collectives::name_of(c));
    for (const collectives::AlgorithmDescriptor* d : collectives::algorithm_table()) {
      if (d->collective != c) continue;
      s += fmt::format("    {:<19} {}\n    {:<19} like {}", d->name, d->summary, "", d->analogue);
      s += d->segmenting.empty() ? "\n" : fmt::format("; {}\n", d->segmenting);
    }
  }
  return s;
}

}  // namespace scalelab::cli
