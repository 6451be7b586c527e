// The behaviour trace (api/trace.h).
#include "api/trace.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

#include "scalelab/runtime.h"

namespace scalelab::api {
namespace {

constexpr const char* kVariable = "SCALELAB_TRACE_FD";
constexpr std::size_t kMaxLine = 4096;  // PIPE_BUF: one write() that no other rank's line splits

struct TraceState {
  std::mutex mutex;
  int fd = -1;
  bool owned = false;  // opened here (PID:N), so closed here
  int rank = -1;
  long long seq = 0;
};

TraceState& state() {
  static TraceState s;
  return s;
}

[[noreturn]] void bad(const std::string& value, const std::string& why) {
  throw ApiError(std::string(kVariable) + "=" + value + ": " + why +
                     ": set it to a descriptor open for writing (N, or PID:N for process PID's descriptor N), or unset it",
                 2);
}

bool all_digits(const std::string& s) {
  return !s.empty() && s.size() <= 9 && s.find_first_not_of("0123456789") == std::string::npos;
}

void write_line(TraceState& s, const std::string& line) {
  const char* p = line.data();
  std::size_t left = line.size();
  while (left > 0) {
    const ssize_t n = ::write(s.fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const std::string why = std::strerror(errno);
      s.fd = -1;  // stop tracing rather than fail every later call
      throw ApiError(std::string("the behaviour trace (") + kVariable + "): writing failed: " + why +
                         ": keep the descriptor open until the program ends",
                     1);
    }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
}

}  // namespace

void open_trace(comm::Communicator& comm) {
  const char* v = std::getenv(kVariable);
  if (v == nullptr || *v == '\0') return;
  const std::string value = v;
  TraceState& s = state();
  const std::size_t colon = value.find(':');
  int fd = -1;
  bool owned = false;
  if (colon == std::string::npos) {
    if (!all_digits(value)) bad(value, "not a descriptor number");
    fd = std::atoi(value.c_str());
    const int flags = ::fcntl(fd, F_GETFL);
    if (flags < 0) bad(value, "descriptor " + value + " is not open in this process");
    if ((flags & O_ACCMODE) == O_RDONLY) bad(value, "descriptor " + value + " is open for reading only");
  } else {
    const std::string pid = value.substr(0, colon), n = value.substr(colon + 1);
    if (!all_digits(pid) || !all_digits(n)) bad(value, "not PID:N with two numbers");
    const std::string path = "/proc/" + pid + "/fd/" + n;
    fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
    if (fd < 0) bad(value, "cannot open " + path + " (" + std::strerror(errno) + ")");
    owned = true;
  }
  {
    std::lock_guard lock(s.mutex);
    s.fd = fd;
    s.owned = owned;
    s.rank = comm.rank();
    s.seq = 0;
  }
  trace("start", {{"format", "scalelab.trace/1"}, {"size", comm.size()}, {"local_rank", comm.local_rank()},
                  {"local_size", comm.local_size()}, {"pid", static_cast<long long>(::getpid())}});
}

void close_trace() {
  if (!tracing()) return;
  trace("end");
  TraceState& s = state();
  std::lock_guard lock(s.mutex);
  if (s.owned && s.fd >= 0) ::close(s.fd);
  s.fd = -1;
}

std::string fingerprint_text(std::uint64_t fingerprint) {
  static const char* digits = "0123456789abcdef";
  std::string s(16, '0');
  for (int i = 15; i >= 0; --i, fingerprint >>= 4) s[static_cast<std::size_t>(i)] = digits[fingerprint & 15];
  return s;
}

bool tracing() { return state().fd >= 0; }

void trace(const char* event, nlohmann::ordered_json fields) {
  TraceState& s = state();
  std::lock_guard lock(s.mutex);
  if (s.fd < 0) return;
  nlohmann::ordered_json line = {{"seq", s.seq}, {"rank", s.rank}, {"event", event}};
  for (auto& [k, val] : fields.items()) line[k] = std::move(val);
  std::string text = line.dump();
  if (text.size() + 1 > kMaxLine) {
    throw ApiError(std::string("the behaviour trace: a \"") + event + "\" event of " + std::to_string(text.size()) +
                       " bytes is longer than one line may be (4095): record it in parts",
                   1);
  }
  text += '\n';
  ++s.seq;
  write_line(s, text);
}

void trace_enter(const char* op, const char* call) {
  if (tracing()) trace("enter", {{"op", op}, {"call", call}});
}

}  // namespace scalelab::api
