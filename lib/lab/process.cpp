// run_process (lab/process.h) with posix_spawn and waitpid.
#include "lab/process.h"

#include <spawn.h>
#include <sys/wait.h>

#include <cerrno>
#include <cstring>
#include <iostream>

#include "core/error.h"

extern char** environ;

namespace scalelab::lab {

int run_process(const std::vector<std::string>& argv) {
  if (argv.empty()) throw_runtime("run_process: no program given");
  std::vector<std::string> copy = argv;
  std::vector<char*> ptrs;
  for (auto& a : copy) ptrs.push_back(a.data());
  ptrs.push_back(nullptr);
  std::cout.flush();
  std::cerr.flush();
  pid_t pid = 0;
  if (const int rc = posix_spawn(&pid, copy[0].c_str(), nullptr, nullptr, ptrs.data(), environ); rc != 0) {
    throw_runtime("cannot start " + copy[0] + ": " + std::strerror(rc));
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) throw_runtime("waiting for " + copy[0] + " failed: " + std::strerror(errno));
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace scalelab::lab
