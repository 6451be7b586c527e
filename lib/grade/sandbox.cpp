// Running a submitted program under limits (grade/sandbox.h).
#include "grade/sandbox.h"

#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <thread>

#include "core/error.h"

extern char** environ;

namespace scalelab::grade {
namespace {

constexpr std::size_t kOutputTail = 64 * 1024;

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// A process's name, state letter and parent from /proc/PID/stat ("PID (NAME) STATE PPID ..."; the
// name may hold spaces and parentheses, so it runs to the last ')'); nothing when it is gone.
struct ProcStat {
  std::string name;
  char state = 0;
  pid_t ppid = 0;
};
std::optional<ProcStat> read_proc_stat(const std::string& pid) {
  std::ifstream in("/proc/" + pid + "/stat");
  std::string stat;
  if (!std::getline(in, stat)) return std::nullopt;
  const std::size_t open = stat.find('('), close = stat.rfind(')');
  if (open == std::string::npos || close == std::string::npos || close < open) return std::nullopt;
  ProcStat p;
  p.name = stat.substr(open + 1, close - open - 1);
  std::istringstream rest(stat.substr(close + 1));
  if (!(rest >> p.state >> p.ppid)) return std::nullopt;
  return p;
}

// Every process whose parent chain leads to `root` (root excluded), from /proc/PID/stat.
std::vector<pid_t> descendants(pid_t root) {
  std::map<pid_t, std::vector<pid_t>> children;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    if (const auto st = read_proc_stat(name)) children[st->ppid].push_back(static_cast<pid_t>(std::stol(name)));
  }
  std::vector<pid_t> out, todo{root};
  while (!todo.empty()) {
    const pid_t p = todo.back();
    todo.pop_back();
    for (pid_t c : children[p]) {
      out.push_back(c);
      todo.push_back(c);
    }
  }
  return out;
}

// The command names of those of `pids` still running (not zombies), each once, in the order
// first seen.
std::vector<std::string> program_names(const std::vector<pid_t>& pids) {
  std::vector<std::string> names;
  for (pid_t p : pids) {
    const auto st = read_proc_stat(std::to_string(p));
    if (!st || st->state == 'Z' || st->name.empty()) continue;
    if (std::find(names.begin(), names.end(), st->name) == names.end()) names.push_back(st->name);
  }
  return names;
}

// Kills every descendant of this process (the grader is their subreaper, so ranks that mpirun
// left behind are among them) and reaps them.
void kill_descendants() {
  for (int round = 0; round < 100; ++round) {
    const std::vector<pid_t> left = descendants(::getpid());
    if (left.empty()) return;
    for (pid_t p : left) ::kill(p, SIGKILL);
    while (::waitpid(-1, nullptr, WNOHANG) > 0) {
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

bool write_text(const char* path, const std::string& text) {
  const int fd = ::open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  ::close(fd);
  return ok;
}

// In a fresh network namespace: brings the loopback interface up (mpirun talks to its ranks over it).
std::string loopback_up() {
  const int s = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (s < 0) return std::string("no socket for the loopback interface: ") + std::strerror(errno);
  ifreq ifr{};
  std::strncpy(ifr.ifr_name, "lo", IFNAMSIZ - 1);
  std::string why;
  if (::ioctl(s, SIOCGIFFLAGS, &ifr) != 0) {
    why = std::string("cannot read the loopback interface's flags: ") + std::strerror(errno);
  } else {
    ifr.ifr_flags = static_cast<short>(ifr.ifr_flags | IFF_UP | IFF_RUNNING);
    if (::ioctl(s, SIOCSIFFLAGS, &ifr) != 0) why = std::string("cannot bring the loopback interface up: ") + std::strerror(errno);
  }
  ::close(s);
  return why;
}

// In the child, before exec: a network namespace of its own (as root; else inside a user
// namespace mapping this user to itself). Returns "" when isolated, else why not.
std::string isolate_network() {
  if (::unshare(CLONE_NEWNET) == 0) return loopback_up();
  const int first = errno;
  const uid_t uid = ::getuid();
  const gid_t gid = ::getgid();
  if (::unshare(CLONE_NEWUSER | CLONE_NEWNET) == 0) {
    write_text("/proc/self/setgroups", "deny");
    if (!write_text("/proc/self/uid_map", std::to_string(uid) + " " + std::to_string(uid) + " 1") ||
        !write_text("/proc/self/gid_map", std::to_string(gid) + " " + std::to_string(gid) + " 1")) {
      return "a user namespace was created but its id maps could not be written";
    }
    return loopback_up();
  }
  return std::string("the kernel refused a new network namespace (unshare: ") + std::strerror(first) + ")";
}

void write_all(int fd, const std::string& text) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n <= 0) return;
    done += static_cast<std::size_t>(n);
  }
}

// Bytes of the regular files under `dir` (symbolic links not followed; what cannot be read skipped).
std::uintmax_t folder_bytes(const std::string& dir) {
  namespace fs = std::filesystem;
  std::uintmax_t total = 0;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, fs::directory_options::skip_permission_denied, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    std::error_code size_ec;
    if (fs::is_regular_file(it->symlink_status(size_ec))) {
      const auto n = it->file_size(size_ec);
      if (!size_ec) total += n;
    }
  }
  return total;
}

std::string read_tail(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  const std::streamoff from = size > static_cast<std::streamoff>(kOutputTail) ? size - static_cast<std::streamoff>(kOutputTail) : 0;
  in.seekg(from);
  std::string text(static_cast<std::size_t>(size - from), '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  return text;
}

}  // namespace

std::string LimitsInForce::text() const {
  std::ostringstream s;
  s << "wall time " << wall_s << " s, memory " << (memory_mib > 0 ? std::to_string(memory_mib) + " MiB per process" : "not limited")
    << ", network " << (network_isolated ? "none (own namespace)" : "not isolated" + (network_note.empty() ? "" : " (" + network_note + ")"))
    << ", disk " << (disk_mib > 0 ? std::to_string(disk_mib) + " MiB per file and in all" : "not limited");
  return s.str();
}

std::string RunOutcome::ending() const {
  std::string names;
  for (const auto& n : left_running) names += (names.empty() ? "" : ", ") + n;
  if (timed_out) {
    std::ostringstream s;
    s << "killed at the " << limits.wall_s << " s limit";
    if (!names.empty()) s << "; still running then: " << names;
    return s.str();
  }
  if (disk_full) return "killed when its folder passed the " + std::to_string(limits.disk_mib) + " MiB disk limit";
  const std::string left = names.empty() ? "" : "; it left running, killed then: " + names;
  if (signal == SIGXFSZ && limits.disk_mib > 0) {
    return "killed by signal " + std::to_string(signal) + " (" + strsignal(signal) + "): a file passed the " +
           std::to_string(limits.disk_mib) + " MiB disk limit" + left;
  }
  if (signal != 0) return "killed by signal " + std::to_string(signal) + " (" + strsignal(signal) + ")" + left;
  return "exit status " + std::to_string(exit_code) + left;
}

RunOutcome run_limited(const std::vector<std::string>& argv, const std::string& dir,
                       const std::vector<std::pair<std::string, std::string>>& env, const Limits& limits,
                       const std::string& output_file) {
  ::prctl(PR_SET_CHILD_SUBREAPER, 1);  // orphaned ranks come back to the grader, to be found and killed
  const int out = ::open(output_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (out < 0) throw_runtime("cannot create " + output_file + ": " + std::strerror(errno) + ": check the grader's work folder");
  int status_pipe[2];
  if (::pipe2(status_pipe, O_CLOEXEC) != 0) throw_runtime(std::string("pipe: ") + std::strerror(errno));

  std::vector<std::string> envs;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string kv = *e;
    bool replaced = false;
    for (const auto& [k, v] : env) replaced = replaced || kv.rfind(k + "=", 0) == 0;
    if (!replaced) envs.push_back(kv);
  }
  for (const auto& [k, v] : env) envs.push_back(k + "=" + v);
  std::vector<char*> cargv, cenv;
  for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  for (const auto& e : envs) cenv.push_back(const_cast<char*>(e.c_str()));
  cenv.push_back(nullptr);

  const auto t0 = std::chrono::steady_clock::now();
  const pid_t pid = ::fork();
  if (pid < 0) throw_runtime(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    // The child. The grader has no other threads, so allocating here is safe until the limit.
    ::close(status_pipe[0]);
    ::setsid();
    const int devnull = ::open("/dev/null", O_RDONLY);
    if (devnull >= 0) ::dup2(devnull, 0);
    ::dup2(out, 1);
    ::dup2(out, 2);
    if (!dir.empty() && ::chdir(dir.c_str()) != 0) {
      write_all(2, "cannot enter " + dir + "\n");
      ::_exit(127);
    }
    std::string note = "net-skipped";
    if (limits.isolate_network) {
      const std::string why = isolate_network();
      note = why.empty() ? "net-ok" : "net-no:" + why;
    }
    // Everything said after the memory limit is composed before it: a process under a small
    // RLIMIT_AS (or a sanitizer's allocator) may not get more memory.
    const std::string said = note + "\n", said_no_limit = note + "\nmem-no\n";
    const std::string cannot_start = "cannot start " + argv[0] + ": ";
    bool limited = true;
    if (limits.memory_mib > 0) {
      const rlim_t bytes = static_cast<rlim_t>(limits.memory_mib) * 1024 * 1024;
      const rlimit lim{bytes, bytes};
      limited = ::setrlimit(RLIMIT_AS, &lim) == 0;
    }
    if (limits.disk_mib > 0) {
      const rlim_t bytes = static_cast<rlim_t>(limits.disk_mib) * 1024 * 1024;
      const rlimit lim{bytes, bytes};
      (void)::setrlimit(RLIMIT_FSIZE, &lim);  // lowering a limit is always permitted
    }
    write_all(status_pipe[1], limited ? said : said_no_limit);
    ::execvpe(cargv[0], cargv.data(), cenv.data());
    const char* why = std::strerror(errno);
    write_all(2, cannot_start);
    if (::write(2, why, std::strlen(why)) < 0 || ::write(2, "\n", 1) < 0) ::_exit(127);
    ::_exit(127);
  }
  ::close(out);
  ::close(status_pipe[1]);
  std::string note;
  char buf[512];
  for (ssize_t n; (n = ::read(status_pipe[0], buf, sizeof buf)) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    note.append(buf, static_cast<std::size_t>(n));
  }
  ::close(status_pipe[0]);

  RunOutcome r;
  r.limits.wall_s = limits.wall_s;
  r.limits.disk_mib = limits.disk_mib;
  r.limits.memory_mib = note.find("mem-no") == std::string::npos ? limits.memory_mib : 0;
  r.limits.network_isolated = note.rfind("net-ok", 0) == 0;
  if (note.rfind("net-no:", 0) == 0) r.limits.network_note = note.substr(7, note.find('\n') - 7);
  if (note.rfind("net-skipped", 0) == 0) r.limits.network_note = "not asked for";

  int status = 0;
  double next_disk_check = 1.0;
  for (;;) {
    const pid_t w = ::waitpid(pid, &status, WNOHANG);
    if (w == pid) break;
    if (w < 0 && errno != EINTR) throw_runtime(std::string("waitpid: ") + std::strerror(errno));
    if (seconds_since(t0) >= limits.wall_s) {
      r.timed_out = true;
      std::vector<pid_t> running{pid};
      for (pid_t p : descendants(::getpid())) running.push_back(p);
      r.left_running = program_names(running);
      ::kill(-pid, SIGKILL);
      kill_descendants();
      ::waitpid(pid, &status, 0);
      break;
    }
    // Many files each under RLIMIT_FSIZE can still fill the disk: the folder is measured once a second.
    if (limits.disk_mib > 0 && !dir.empty() && seconds_since(t0) >= next_disk_check) {
      next_disk_check += 1.0;
      if (folder_bytes(dir) > static_cast<std::uintmax_t>(limits.disk_mib) * 1024 * 1024) {
        r.disk_full = true;
        ::kill(-pid, SIGKILL);
        kill_descendants();
        ::waitpid(pid, &status, 0);
        break;
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  r.seconds = seconds_since(t0);
  if (!r.timed_out && !r.disk_full) r.left_running = program_names(descendants(::getpid()));
  kill_descendants();  // whatever the program left running
  if (!r.timed_out && !r.disk_full) {
    if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
  }
  r.output = read_tail(output_file);
  return r;
}

}  // namespace scalelab::grade
