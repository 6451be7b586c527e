// standard_output_open and standard_output_error (core/standard_output.h).
#include "core/standard_output.h"

#include <fcntl.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>

namespace scalelab {

bool standard_output_open() { return ::fcntl(1, F_GETFD) >= 0; }

std::string standard_output_error() {
  std::cout.flush();
  errno = 0;
  const bool flushed = std::fflush(stdout) == 0;
  if (flushed && !std::ferror(stdout) && !std::cout.bad()) return "";
  return errno != 0 ? std::strerror(errno) : "write error";
}

}  // namespace scalelab
