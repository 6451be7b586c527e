// StallWatchdog (comm/watchdog.h): the watching thread, the heartbeat files and the report.
#include "comm/watchdog.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "comm/phases.h"
#include "core/error.h"
#include "core/timer.h"

namespace scalelab::comm {

namespace {

constexpr int kNamedPeers = 4;        // waiting ranks named in the report; the rest are counted

double wall_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string rank_file(const std::string& dir, int rank) { return dir + "/rank-" + std::to_string(rank); }

// The file's layout: one record, written in place through a shared mapping, so a beat is visible
// to the other ranks at once and survives this process being stopped or killed.
struct Record {
  std::uint64_t magic;
  char phase[40];
  std::int64_t step;
  double beat;     // wall time of the last beat
  double written;  // wall time the watchdog thread last stamped the record
};
constexpr std::uint64_t kMagic = 0x31544248534c4353ull;  // "SCLSHBT1"

struct Heartbeat {
  int rank = 0;
  std::string phase;
  long long step = 0;
  double beat = 0;     // wall time of the last beat
  double written = 0;  // wall time the file was last written
};

bool read_heartbeat(const std::string& dir, int rank, Heartbeat& h) {
  std::ifstream in(rank_file(dir, rank), std::ios::binary);
  Record r{};
  if (!in.read(reinterpret_cast<char*>(&r), sizeof r) || r.magic != kMagic) return false;
  r.phase[sizeof r.phase - 1] = '\0';
  h.rank = rank;
  h.phase = r.phase;
  h.step = r.step;
  h.beat = r.beat;
  h.written = r.written;
  return true;
}

// Heartbeat folders of jobs that were killed (nothing removed them) under `base`: a folder goes
// when every rank file in it is one of ours and none was stamped in the last hour (a live rank's
// watchdog thread stamps its file every second). `keep` is this job's own folder.
void remove_stale_heartbeats(const std::string& base, const std::string& keep, double now) {
  namespace fs = std::filesystem;
  constexpr double kStaleS = 3600;
  const auto folder_age_ok = [](const fs::path& p) {  // not created or changed in the last hour
    std::error_code ec;
    const auto t = fs::last_write_time(p, ec);
    return !ec && fs::file_time_type::clock::now() - t > std::chrono::seconds(static_cast<long>(kStaleS));
  };
  std::error_code ec;
  for (fs::directory_iterator it(base, ec), end; !ec && it != end; it.increment(ec)) {
    const fs::path dir = it->path();
    std::error_code type_ec;
    if (dir.filename().string().rfind("scalelab-heartbeat-", 0) != 0 || dir == keep || !it->is_directory(type_ec)) continue;
    if (!folder_age_ok(dir)) continue;  // a job that has only just made its folder
    bool stale = true;
    int records = 0;
    std::error_code inner;
    for (fs::directory_iterator f(dir, inner), f_end; stale && !inner && f != f_end; f.increment(inner)) {
      std::ifstream in(f->path(), std::ios::binary);
      Record r{};
      const bool ours = f->path().filename().string().rfind("rank-", 0) == 0 &&
                        in.read(reinterpret_cast<char*>(&r), sizeof r) && r.magic == kMagic;
      stale = ours && now - r.written >= kStaleS;
      ++records;
    }
    if (stale && records > 0 && !inner) fs::remove_all(dir, inner);
  }
}

}  // namespace

std::string StallWatchdog::heartbeat_dir() {
  const char* job = std::getenv("PMIX_NAMESPACE");
  if (job == nullptr || *job == '\0') job = std::getenv("OMPI_MCA_orte_ess_jobid");
  if (job == nullptr || *job == '\0') return "";
  const std::string id(job);
  if (id.find_first_of("/\\") != std::string::npos) return "";
  const char* tmp = std::getenv("TMPDIR");
  const std::string base = tmp != nullptr && *tmp != '\0' ? tmp : "/tmp";
  return base + "/scalelab-heartbeat-" + id;
}

double StallWatchdog::unresponsive_after(double timeout_s) { return std::min(5.0, std::max(2.0, timeout_s / 2)); }

std::string StallWatchdog::describe_peers(const std::string& dir, int rank, int ranks, double now, double unresponsive_s) {
  if (dir.empty()) return "";
  std::vector<Heartbeat> seen;
  std::vector<int> missing;
  bool peer_read = false;
  for (int r = 0; r < ranks; ++r) {
    Heartbeat h;
    if (read_heartbeat(dir, r, h)) {
      seen.push_back(h);
      peer_read = peer_read || r != rank;
    } else {
      missing.push_back(r);
    }
  }
  if (!peer_read) return "";
  // The stopped: ranks whose process no longer writes its file; failing that, the rank whose
  // last beat is the oldest (every process alive, one stuck outside any collective), and of beats
  // stamped alike (the clock's resolution) the one at the earlier step.
  std::vector<const Heartbeat*> stopped, waiting;
  for (const Heartbeat& h : seen) (now - h.written > unresponsive_s ? stopped : waiting).push_back(&h);
  if (stopped.empty() && !waiting.empty()) {
    const auto oldest = std::min_element(waiting.begin(), waiting.end(),
                                         [](const Heartbeat* a, const Heartbeat* b) {
                                           return a->beat < b->beat || (a->beat == b->beat && a->step < b->step);
                                         });
    stopped.push_back(*oldest);
    waiting.erase(oldest);
  }
  std::string out;
  for (const Heartbeat* h : stopped) {
    out += fmt::format("{}rank {} stopped making progress {:.0f} s ago (last in {}, step {}", out.empty() ? "" : "; ",
                       h->rank, now - h->beat, h->phase, h->step);
    if (now - h->written > unresponsive_s) out += fmt::format("; its process stopped responding {:.0f} s ago", now - h->written);
    out += ")";
  }
  for (const int r : missing) out += fmt::format("; rank {} left no heartbeat (dead, or on another host)", r);
  int named = 0;
  for (const Heartbeat* h : waiting) {
    if (++named > kNamedPeers) continue;
    out += fmt::format("; rank {} was waiting in {}, step {}", h->rank, h->phase, h->step);
  }
  if (named > kNamedPeers) out += fmt::format(" (and {} more ranks waiting)", named - kNamedPeers);
  return out;
}

StallWatchdog::StallWatchdog(double timeout_s, int rank, int ranks, std::string what)
    : timeout_s_(timeout_s), rank_(rank), ranks_(ranks), what_(std::move(what)), fault_(rank, ranks), last_beat_s_(now_seconds()),
      last_beat_wall_s_(wall_seconds()) {
  if (timeout_s_ <= 0) return;
  if (ranks_ > 1) dir_ = heartbeat_dir();
  if (!dir_.empty() && rank_ == 0) {
    remove_stale_heartbeats(std::filesystem::path(dir_).parent_path().string(), dir_, wall_seconds());
  }
  if (!dir_.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(dir_, ec);
    const std::string file = rank_file(dir_, rank_);
    const int fd = ec ? -1 : ::open(file.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd >= 0 && ::ftruncate(fd, sizeof(Record)) == 0) {
      void* p = ::mmap(nullptr, sizeof(Record), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
      if (p != MAP_FAILED) {
        record_ = p;
        file_ = file;
      }
    }
    if (fd >= 0) ::close(fd);
    // Without the file there is no side channel: the report falls back to this rank's own phase.
  }
  if (record_ != nullptr) {
    auto* r = static_cast<Record*>(record_);
    std::snprintf(r->phase, sizeof r->phase, "%s", phase_.load());
    r->beat = last_beat_wall_s_.load();
    r->written = wall_seconds();
    r->magic = kMagic;
  }
  thread_ = std::thread([this] { watch(); });
}

StallWatchdog::~StallWatchdog() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  if (record_ != nullptr) ::munmap(record_, sizeof(Record));
  if (!file_.empty()) {
    std::error_code ec;
    std::filesystem::remove(file_, ec);
    std::filesystem::remove(dir_, ec);  // only when empty: the last rank out removes the folder
  }
}

void StallWatchdog::beat(const char* phase, std::int64_t step) {
  if (!known_phase(phase)) throw_runtime(std::string("watchdog: phase '") + phase + "' is missing from comm/phases.h");
  phase_.store(phase, std::memory_order_relaxed);
  step_.store(step, std::memory_order_relaxed);
  last_beat_s_.store(now_seconds(), std::memory_order_relaxed);
  const double wall = wall_seconds();
  last_beat_wall_s_.store(wall, std::memory_order_relaxed);
  if (record_ != nullptr) {
    auto* r = static_cast<Record*>(record_);
    std::snprintf(r->phase, sizeof r->phase, "%s", phase);
    r->step = step;
    r->beat = wall;
  }
  fault_.enter(phase);
}

void StallWatchdog::watch() {
  std::unique_lock<std::mutex> lock(mutex_);
  double last_check = now_seconds();
  while (!cv_.wait_for(lock, std::chrono::seconds(1), [this] { return stop_; })) {
    if (record_ != nullptr) static_cast<Record*>(record_)->written = wall_seconds();
    const double now = now_seconds();
    const double gap = now - last_check;
    last_check = now;
    const double idle = now - last_beat_s_.load(std::memory_order_relaxed);
    if (idle <= timeout_s_) continue;
    if (gap > unresponsive_after(timeout_s_)) {
      // This thread itself did not run for a while: this process was the one stopped (SIGSTOP,
      // a suspended host), and its peers have given up on it.
      const std::string line = fmt::format(
          "error: rank {}: this rank was stopped for {:.0f} s (last in {}, step {}); its peers have ended; ending "
          "this rank (stall timeout)\n",
          rank_, gap, phase_.load(), step_.load());
      (void)!::write(STDERR_FILENO, line.data(), line.size());
      std::_Exit(1);
    }
    const std::string peers = describe_peers(dir_, rank_, ranks_, wall_seconds(), unresponsive_after(timeout_s_));
    const std::string line =
        peers.empty()
            ? fmt::format("error: rank {}: no progress in {} for {:.0f} s, last in {} at step {}: another rank has "
                          "stopped or died; ending this rank (stall timeout)\n",
                          rank_, what_, idle, phase_.load(), step_.load())
            : fmt::format("error: rank {}: no progress in {} for {:.0f} s: {}; ending this rank (stall timeout)\n", rank_,
                          what_, idle, peers);
    // This rank's file stays: peers timing out after it still read where it was.
    // One write, so that ranks' lines are not interleaved.
    (void)!::write(STDERR_FILENO, line.data(), line.size());
    std::_Exit(1);  // the blocked main thread cannot be unwound; mpirun ends the other ranks
  }
}

}  // namespace scalelab::comm
