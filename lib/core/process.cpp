// run_process, this_executable and find_in_path (core/process.h), with posix_spawn and waitpid.
#include "core/process.h"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>

#include "core/error.h"
#include "core/text.h"

extern char** environ;

namespace scalelab {

int run_process(const std::vector<std::string>& argv, const std::string& working_dir) {
  if (argv.empty()) throw_runtime("run_process: no program given");
  std::vector<std::string> copy = argv;
  std::vector<char*> ptrs;
  for (auto& a : copy) ptrs.push_back(a.data());
  ptrs.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (!working_dir.empty()) posix_spawn_file_actions_addchdir_np(&actions, working_dir.c_str());
  std::cout.flush();
  std::cerr.flush();
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, copy[0].c_str(), &actions, nullptr, ptrs.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    throw_runtime("cannot start " + copy[0] + (working_dir.empty() ? "" : " in " + working_dir) + ": " +
                  std::strerror(rc));
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) throw_runtime("waiting for " + copy[0] + " failed: " + std::strerror(errno));
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::string this_executable() {
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) throw_runtime("cannot find this program's own path (/proc/self/exe: " + ec.message() + ")");
  return self.string();
}

std::string scalelab_binary() {
  const std::filesystem::path self = this_executable();
  if (self.filename() == "scalelab") return self.string();
  if (const char* env = std::getenv("SCALELAB_BIN"); env != nullptr && *env != '\0') {
    if (::access(env, X_OK) != 0) throw_usage(std::string("SCALELAB_BIN=") + env + ": not an executable file");
    return env;
  }
  const std::filesystem::path beside = self.parent_path() / "scalelab";
  if (::access(beside.c_str(), X_OK) != 0) {
    throw_usage("cannot find the scalelab binary beside " + self.filename().string() + " (" + beside.string() +
                "); build the 'scalelab' target or set SCALELAB_BIN");
  }
  return beside.string();
}

std::string find_in_path(const std::string& program) {
  const char* path = std::getenv("PATH");
  for (const auto& dir : split_list(path != nullptr ? path : "/usr/bin:/bin", ':')) {
    const std::filesystem::path candidate = std::filesystem::path(dir.empty() ? "." : dir) / program;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate.string();
  }
  return {};
}

}  // namespace scalelab
