// FaultInjector (comm/fault_injection.h).
#include "comm/fault_injection.h"

#include <signal.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <exception>

#include "comm/phases.h"
#include "core/error.h"
#include "core/text.h"

namespace scalelab::comm {

namespace {

constexpr const char* kVariable = "SCALELAB_FAULT_AT";

int signal_number(const std::string& name) {
  static const struct {
    const char* name;
    int number;
  } kSignals[] = {{"KILL", SIGKILL}, {"STOP", SIGSTOP}, {"TERM", SIGTERM}, {"INT", SIGINT},
                  {"ABRT", SIGABRT}, {"SEGV", SIGSEGV}, {"HUP", SIGHUP}};
  const std::string bare = name.rfind("SIG", 0) == 0 ? name.substr(3) : name;
  for (const auto& s : kSignals) {
    if (bare == s.name) return s.number;
  }
  char* end = nullptr;
  const long n = std::strtol(name.c_str(), &end, 10);
  if (name.empty() || *end != '\0' || n < 1 || n > SIGRTMAX) return 0;
  // A signal a process ignores or continues on by default would arm a fault that never happens.
  if (n == SIGCHLD || n == SIGCONT || n == SIGURG || n == SIGWINCH) return 0;
  return static_cast<int>(n);
}

[[noreturn]] void bad(const std::string& value, const std::string& why) {
  throw_usage(std::string(kVariable) + "=" + value + ": " + why +
              "; give PHASE:RANK:SIGNAL[:N], e.g. allreduce:1:STOP or checkpoint:0:KILL:2");
}

}  // namespace

FaultInjector::FaultInjector(int rank, int ranks) {
  const char* env = std::getenv(kVariable);
  if (env == nullptr || *env == '\0') return;
  const std::string value(env);
  const auto parts = split_list(value, ':');
  if (parts.size() != 3 && parts.size() != 4) bad(value, "expected 3 or 4 fields");
  char* end = nullptr;
  errno = 0;
  const long target = std::strtol(parts[1].c_str(), &end, 10);
  if (parts[1].empty() || *end != '\0' || target < 0 || errno == ERANGE) bad(value, "'" + parts[1] + "' is not a rank");
  signal_ = signal_number(parts[2]);
  if (signal_ == 0) {
    bad(value, "'" + parts[2] + "' is not a signal that ends or stops a process (KILL, STOP, TERM, INT, ABRT, SEGV, HUP or "
               "the number of one)");
  }
  if (parts.size() == 4) {
    errno = 0;
    nth_ = std::strtol(parts[3].c_str(), &end, 10);
    if (parts[3].empty() || *end != '\0' || nth_ < 1 || errno == ERANGE) {
      bad(value, "'" + parts[3] + "' is not an entry count from 1 to " + std::to_string(LONG_MAX));
    }
  }
  if (!known_phase(parts[0])) bad(value, "'" + parts[0] + "' is not a phase (" + phase_list() + ")");
  phase_ = parts[0];
  value_ = value;
  // A rank beyond the job would arm nothing, and the test relying on it would pass without a fault.
  if (target >= ranks) bad(value, "rank " + parts[1] + " is not in this job of " + std::to_string(ranks) + " rank(s)");
  armed_ = target == rank;
}

FaultInjector::~FaultInjector() {
  if (!armed_ || std::uncaught_exceptions() > 0) return;  // unwinding: the run failed anyway
  const long seen = seen_.load();
  if (seen >= nth_) return;
  std::fprintf(stderr, "warning: %s=%s: this rank entered %s %ld time%s, not the %ld the fault waits for: nothing was raised\n",
               kVariable, value_.c_str(), phase_.c_str(), seen, seen == 1 ? "" : "s", nth_);
}

void FaultInjector::enter(const char* phase) {
  if (!armed_ || phase_ != phase) return;
  if (seen_.fetch_add(1) + 1 == nth_) ::raise(signal_);
}

}  // namespace scalelab::comm
