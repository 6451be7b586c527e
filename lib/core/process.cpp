// run_process, this_executable and find_in_path (core/process.h), with posix_spawn and waitpid.
#include "core/process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <thread>

#include "core/error.h"
#include "core/text.h"

extern char** environ;

namespace scalelab {

namespace {

constexpr int kForwarded[] = {SIGTERM, SIGINT, SIGHUP};
volatile sig_atomic_t g_child = 0;     // the child signals are forwarded to; 0: none
volatile sig_atomic_t g_received = 0;  // the first signal forwarded

extern "C" void forward_to_child(int sig) {
  if (g_received == 0) g_received = sig;
  if (g_child > 0) ::kill(static_cast<pid_t>(g_child), sig);
}

// Installs forward_to_child for kForwarded while alive; restores the previous handlers.
class SignalForwarding {
 public:
  explicit SignalForwarding(bool on) : on_(on) {
    if (!on_) return;
    g_child = 0;
    g_received = 0;
    struct sigaction sa {};
    sa.sa_handler = forward_to_child;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = 0;  // no SA_RESTART: waitpid returns EINTR and the loop goes on waiting
    for (std::size_t i = 0; i < std::size(kForwarded); ++i) sigaction(kForwarded[i], &sa, &old_[i]);
  }
  ~SignalForwarding() {
    if (!on_) return;
    for (std::size_t i = 0; i < std::size(kForwarded); ++i) sigaction(kForwarded[i], &old_[i], nullptr);
    g_child = 0;
  }
  SignalForwarding(const SignalForwarding&) = delete;
  SignalForwarding& operator=(const SignalForwarding&) = delete;

 private:
  bool on_;
  struct sigaction old_[std::size(kForwarded)] {};
};

// Starts `path` as a child that receives SIGTERM when this process dies, even by SIGKILL (which
// nothing could forward; strictly, when the thread that forked ends: call it from the main thread): a launcher such as mpirun then ends its ranks instead of running on
// without the command that started it. fork + exec, since posix_spawn cannot ask for that; a
// close-on-exec pipe brings back exec's errno. Returns 0 or that errno.
int spawn_tied(const std::string& path, std::vector<char*>& argv, const std::string& working_dir, int stderr_fd,
               pid_t& pid) {
  int report[2];
  if (::pipe2(report, O_CLOEXEC) != 0) return errno;
  const pid_t parent = ::getpid();
  pid = ::fork();
  if (pid < 0) {
    const int err = errno;
    ::close(report[0]);
    ::close(report[1]);
    return err;
  }
  if (pid == 0) {
    ::close(report[0]);
    // The forwarding handler is inherited and would catch the parent-death signal before exec
    // (with no child to pass it to): the default disposition first.
    for (const int sig : kForwarded) ::signal(sig, SIG_DFL);
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (::getppid() != parent) ::_exit(127);  // the parent died before the request took hold
    int err = 0;
    if (stderr_fd >= 0 && ::dup2(stderr_fd, STDERR_FILENO) < 0) err = errno;
    if (err == 0 && !working_dir.empty() && ::chdir(working_dir.c_str()) != 0) err = errno;
    if (err == 0) {
      ::execve(path.c_str(), argv.data(), environ);  // handlers go back to default on exec
      err = errno;
    }
    (void)!::write(report[1], &err, sizeof err);
    ::_exit(127);
  }
  ::close(report[1]);
  int err = 0;
  ssize_t n = 0;
  while ((n = ::read(report[0], &err, sizeof err)) < 0 && errno == EINTR) {
  }
  ::close(report[0]);
  if (n == static_cast<ssize_t>(sizeof err) && err != 0) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    return err;
  }
  return 0;
}

// Reads the child's standard error from `fd` and hands it on line by line, until the pipe ends, or
// until the child has ended (child_done) and nothing came for 0.2 s. Closes fd.
void read_lines(int fd, const std::function<void(const std::string&)>& on_line, const std::atomic<bool>& child_done) {
  std::string pending;
  char chunk[4096];
  const auto hand_on = [&](const std::string& line) {
    try {
      on_line(line);
    } catch (...) {  // a line that cannot be written must not end the program from this thread
    }
  };
  for (;;) {
    pollfd p{fd, POLLIN, 0};
    const int ready = ::poll(&p, 1, 200);
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) break;
    if (ready == 0) {
      if (child_done.load()) break;
      continue;
    }
    const ssize_t n = ::read(fd, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    pending.append(chunk, static_cast<std::size_t>(n));
    std::size_t end = 0;
    while ((end = pending.find('\n')) != std::string::npos) {
      hand_on(pending.substr(0, end));
      pending.erase(0, end + 1);
    }
  }
  if (!pending.empty()) hand_on(pending);
  ::close(fd);
}

}  // namespace

int run_process(const std::vector<std::string>& argv, const std::string& working_dir, bool forward_signals,
                int* forwarded, const std::function<void(const std::string& line)>& stderr_lines) {
  if (forwarded != nullptr) *forwarded = 0;
  if (argv.empty()) throw_runtime("run_process: no program given");
  int err_pipe[2] = {-1, -1};
  if (stderr_lines && ::pipe2(err_pipe, O_CLOEXEC) != 0) {
    throw_runtime(std::string("cannot make a pipe for the standard error of ") + argv[0] + ": " + std::strerror(errno));
  }
  std::vector<std::string> copy = argv;
  std::vector<char*> ptrs;
  for (auto& a : copy) ptrs.push_back(a.data());
  ptrs.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (!working_dir.empty()) posix_spawn_file_actions_addchdir_np(&actions, working_dir.c_str());
  if (err_pipe[1] >= 0) posix_spawn_file_actions_adddup2(&actions, err_pipe[1], STDERR_FILENO);
  std::cout.flush();
  std::cerr.flush();
  pid_t pid = 0;
  const SignalForwarding forwarding(forward_signals);
  // The child starts with the default disposition of the forwarded signals, not our handler.
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t defaults;
  sigemptyset(&defaults);
  if (forward_signals) {
    for (const int sig : kForwarded) sigaddset(&defaults, sig);
    posix_spawnattr_setsigdefault(&attr, &defaults);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF);
  }
  int rc = 0;
  if (forward_signals) {
    rc = spawn_tied(copy[0], ptrs, working_dir, err_pipe[1], pid);
  } else {
    rc = posix_spawn(&pid, copy[0].c_str(), &actions, &attr, ptrs.data(), environ);
  }
  posix_spawnattr_destroy(&attr);
  if (rc == 0 && forward_signals) {
    g_child = pid;
    if (g_received != 0) ::kill(pid, g_received);  // a signal that came while it was starting
  }
  posix_spawn_file_actions_destroy(&actions);
  if (err_pipe[1] >= 0) ::close(err_pipe[1]);  // the child holds its own copy
  if (rc != 0) {
    if (err_pipe[0] >= 0) ::close(err_pipe[0]);
    throw_runtime("cannot start " + copy[0] + (working_dir.empty() ? "" : " in " + working_dir) + ": " +
                  std::strerror(rc));
  }
  std::atomic<bool> child_done{false};
  std::thread reader;
  if (err_pipe[0] >= 0) reader = std::thread(read_lines, err_pipe[0], std::cref(stderr_lines), std::cref(child_done));
  int status = 0;
  int wait_error = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      wait_error = errno;
      break;
    }
  }
  child_done = true;
  if (reader.joinable()) reader.join();
  if (wait_error != 0) throw_runtime("waiting for " + copy[0] + " failed: " + std::strerror(wait_error));
  if (forward_signals && g_received != 0) {
    if (forwarded != nullptr) *forwarded = g_received;
    return 128 + g_received;
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
