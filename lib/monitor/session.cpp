// run_session (session.h). SIGINT and SIGTERM are blocked on the calling thread before the
// sampling thread starts (so it inherits the mask) and taken with sigtimedwait, which lets a
// signal end the session through normal code: files flushed, NVLink counters read, report written.
#include "monitor/session.h"

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <iostream>

#include "core/error.h"

extern char** environ;

namespace scalelab::monitor {
namespace {

// Blocks SIGINT and SIGTERM for this object's life; drains what arrived before restoring the mask
// so a handled Ctrl-C does not kill the process afterwards.
class BlockedSignals {
 public:
  BlockedSignals() {
    sigemptyset(&set_);
    sigaddset(&set_, SIGINT);
    sigaddset(&set_, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set_, &old_);
  }
  ~BlockedSignals() {
    const timespec zero{0, 0};
    while (sigtimedwait(&set_, nullptr, &zero) > 0) {
    }
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }
  BlockedSignals(const BlockedSignals&) = delete;
  BlockedSignals& operator=(const BlockedSignals&) = delete;
  // The signal that arrived within `ms` milliseconds, or 0.
  int wait(long ms) const {
    const timespec t{ms / 1000, (ms % 1000) * 1000000};
    const int sig = sigtimedwait(&set_, nullptr, &t);
    return sig > 0 ? sig : 0;
  }
  [[nodiscard]] const sigset_t& set() const { return set_; }

 private:
  sigset_t set_{};
  sigset_t old_{};
};

// Starts `command` (looked up in PATH) with default handling and an empty mask for SIGINT/SIGTERM.
pid_t spawn(const std::vector<std::string>& command, const sigset_t& signals) {
  std::vector<std::string> copy = command;
  std::vector<char*> argv;
  for (auto& a : copy) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t empty;
  sigemptyset(&empty);
  posix_spawnattr_setsigmask(&attr, &empty);
  posix_spawnattr_setsigdefault(&attr, &signals);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, copy[0].c_str(), nullptr, &attr, argv.data(), environ);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) throw_runtime("cannot start " + copy[0] + ": " + std::strerror(rc) + "; check the command and PATH");
  return pid;
}

}  // namespace

SessionResult run_session(GpuSampler& sampler, std::ostream& csv, const SessionOptions& options) {
  SessionResult result;
  const BlockedSignals signals;
  GpuMonitor monitor(sampler, csv, options.monitor);
  monitor.start();
  if (!options.command.empty()) {
    std::cout.flush();
    const pid_t child = spawn(options.command, signals.set());  // on failure ~GpuMonitor stops sampling
    int status = 0;
    for (;;) {
      const pid_t done = waitpid(child, &status, WNOHANG);
      if (done == child) break;
      if (done < 0 && errno != EINTR) {
        throw_runtime("waiting for " + options.command[0] + " failed: " + std::strerror(errno));
      }
      if (const int sig = signals.wait(100)) kill(child, sig);  // the child decides when to end
    }
    result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  } else {
    while (!monitor.wait_finished(std::chrono::milliseconds(0))) {
      if (signals.wait(100) != 0) {
        result.interrupted = true;
        break;
      }
    }
  }
  result.report = monitor.stop();
  return result;
}

}  // namespace scalelab::monitor
