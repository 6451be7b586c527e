// Whether a command's standard output works: open when it starts (else the first file it opens
// would become descriptor 1 and receive what it prints), and everything printed delivered when it
// ends (a full disk or a closed pipe shows only when the buffers are flushed). The scalelab
// command and the lab executables check both, so that a lost output is never an exit status 0.
//
//   if (!standard_output_open()) { ...one line, exit 2 }
//   ... the command ...
//   if (const std::string why = standard_output_error(); !why.empty()) { ...one line, exit 1 }
#pragma once
#include <string>

namespace scalelab {

[[nodiscard]] bool standard_output_open();
// Flushes std::cout and stdout; "" when everything printed was written, else why not.
[[nodiscard]] std::string standard_output_error();

}  // namespace scalelab
