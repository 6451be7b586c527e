// algorithms_help (algorithm_help.h).
#include "algorithm_help.h"

#include <fmt/format.h>

#include "core/size_parse.h"

namespace scalelab::cli {

std::string algorithms_help(std::optional<collectives::Collective> only) {
  std::string s = "algorithms (--algo):\n";
  for (const collectives::Collective c : collectives::all_collectives()) {
    if (only && c != *only) continue;
    if (!only) s += fmt::format("  {}:\n", collectives::name_of(c));
    for (const collectives::AlgorithmDescriptor* d : collectives::algorithm_table()) {
      if (d->collective != c) continue;
      s += fmt::format("    {:<19} {}\n    {:<19} like {}", d->name, d->summary, "", d->analogue);
      if (d->segment_bytes == 0) {
        s += "\n";
      } else if (d->max_segments > 0) {
        s += fmt::format("; blocks over {} go in at most {} segments\n", format_size(d->segment_bytes), d->max_segments);
      } else {
        s += fmt::format("; {} segments\n", format_size(d->segment_bytes));
      }
    }
  }
  return s;
}

}  // namespace scalelab::cli
