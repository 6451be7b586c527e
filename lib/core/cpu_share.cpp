// The CPU-share sampler (cpu_share.h): /proc readers, the per-rank arithmetic, the verdict.
#include "core/cpu_share.h"

#include <dirent.h>
#include <time.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/timer.h"

namespace scalelab {
namespace {

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

double process_cpu_seconds() {
  timespec ts{};
  if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) != 0) return 0;
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

std::map<long, SchedStat> thread_schedstats() {
  std::map<long, SchedStat> threads;
  DIR* dir = opendir("/proc/self/task");
  if (dir == nullptr) return threads;
  while (const dirent* e = readdir(dir)) {
    char* end = nullptr;
    const long tid = std::strtol(e->d_name, &end, 10);
    if (end == e->d_name || *end != '\0') continue;  // "." and ".."
    if (const auto s = parse_schedstat(read_text(std::string("/proc/self/task/") + e->d_name + "/schedstat"))) {
      threads[tid] = *s;
    }
  }
  closedir(dir);
  return threads;
}

double load_average_now() {
  std::ifstream in("/proc/loadavg");
  double l = -1;
  return (in >> l) ? l : -1;
}

}  // namespace

std::optional<SchedStat> parse_schedstat(std::string_view text) {
  std::istringstream in{std::string(text)};
  double run_ns = 0, wait_ns = 0, slices = 0;
  if (!(in >> run_ns >> wait_ns) || run_ns < 0 || wait_ns < 0) return std::nullopt;
  if (!(in >> slices)) slices = 0;
  return SchedStat{run_ns * 1e-9, wait_ns * 1e-9, slices};
}

std::optional<CpuTicks> parse_proc_stat(std::string_view text) {
  std::istringstream in{std::string(text)};
  std::string label;
  if (!(in >> label) || label != "cpu") return std::nullopt;
  // user nice system idle iowait irq softirq steal guest guest_nice; guest time is already counted
  // in user and nice, so the total stops at steal.
  CpuTicks t;
  double v = 0;
  int fields = 0;
  for (; fields < 8 && in >> v; ++fields) {
    t.total += v;
    if (fields == 7) t.steal = v;
  }
  if (fields < 4) return std::nullopt;  // at least user nice system idle
  return t;
}

CpuSample read_cpu_sample() {
  CpuSample s;
  s.wall_s = now_seconds();
  s.process_cpu_s = process_cpu_seconds();
  s.threads = thread_schedstats();
  s.machine = parse_proc_stat(read_text("/proc/stat"));
  s.load_average = load_average_now();
  return s;
}

RankLoad rank_load(const CpuSample& start, const CpuSample& end, int threads) {
  RankLoad r;
  r.wall_s = std::max(0.0, end.wall_s - start.wall_s);
  r.cpu_s = std::max(0.0, end.process_cpu_s - start.process_cpu_s);
  r.threads = std::max(1, threads);
  r.load_average_start = start.load_average;
  r.load_average_end = end.load_average;
  if (r.wall_s <= 0) return r;
  r.schedstat = std::any_of(end.threads.begin(), end.threads.end(), [](const auto& t) { return t.second.slices > 0; });
  if (r.schedstat) {
    // The thread that waited most sets the verdict: the rank's pace is its slowest busy thread's.
    for (const auto& [tid, e] : end.threads) {
      const auto s = start.threads.find(tid);
      const SchedStat b = s == start.threads.end() ? SchedStat{} : s->second;
      const double run = std::max(0.0, e.run_s - b.run_s);
      const double wait = std::max(0.0, e.wait_s - b.wait_s);
      const double fraction = wait / r.wall_s;
      if (fraction > r.wait_fraction) {
        r.wait_fraction = fraction;
        r.cpu_share = run + wait > 0 ? run / (run + wait) : 1.0;
      }
    }
  } else {
    r.cpu_share = std::min(1.0, r.cpu_s / (r.wall_s * r.threads));
    r.wait_fraction = 1.0 - r.cpu_share;
  }
  if (start.machine && end.machine) {
    const double total = end.machine->total - start.machine->total;
    if (total > 0) r.steal_fraction = std::max(0.0, end.machine->steal - start.machine->steal) / total;
  }
  return r;
}

namespace {

bool rank_contended(const RankLoad& r) {
  return r.schedstat ? r.wait_fraction > kContendedWaitFraction : r.cpu_share < kContendedCpuShare;
}

}  // namespace

LoadSummary summarize_load(const std::vector<RankLoad>& ranks) {
  LoadSummary s;
  const RankLoad* worst = nullptr;
  double steal = -1, load = -1;
  for (const RankLoad& r : ranks) {
    if (r.wall_s < kMinJudgedSeconds) continue;
    s.judged = true;
    if (rank_contended(r) && (worst == nullptr || r.cpu_share < worst->cpu_share)) worst = &r;
    steal = std::max(steal, r.steal_fraction);
    load = std::max({load, r.load_average_start, r.load_average_end});
  }
  const std::string tail = load >= 0 ? fmt::format(" (load average {:.1f})", load) : std::string();
  if (worst != nullptr) {
    s.contended = true;
    s.warning = worst->schedstat
                    ? fmt::format("rank {} received {:.0f}% of a core while it was runnable (it waited on a run "
                                  "queue {:.0f}% of its {:.1f} s): other processes were running{}; these timings do "
                                  "not describe this machine",
                                  worst->rank, 100 * worst->cpu_share, 100 * worst->wait_fraction, worst->wall_s, tail)
                    : fmt::format("rank {} received {:.0f}% of {} core{} over its {:.1f} s: other processes were "
                                  "running{}; these timings do not describe this machine",
                                  worst->rank, 100 * worst->cpu_share, worst->threads, worst->threads == 1 ? "" : "s",
                                  worst->wall_s, tail);
  } else if (steal > kContendedStealFraction) {
    s.contended = true;
    s.warning = fmt::format("the hypervisor took {:.0f}% of the CPUs' time (steal){}; these timings do not describe "
                            "this machine",
                            100 * steal, tail);
  }
  return s;
}

nlohmann::json load_json(const std::vector<RankLoad>& ranks) {
  nlohmann::json per_rank = nlohmann::json::array();
  double steal = -1, start = -1, end = -1;
  bool schedstat = !ranks.empty();
  for (const RankLoad& r : ranks) {
    per_rank.push_back({{"rank", r.rank}, {"wall_seconds", r.wall_s}, {"cpu_seconds", r.cpu_s},
                        {"threads", r.threads}, {"run_queue_wait_fraction", r.wait_fraction},
                        {"cpu_share", r.cpu_share}});
    steal = std::max(steal, r.steal_fraction);
    start = std::max(start, r.load_average_start);
    end = std::max(end, r.load_average_end);
    schedstat = schedstat && r.schedstat;
  }
  const LoadSummary s = summarize_load(ranks);
  const auto or_null = [](double v) { return v < 0 ? nlohmann::json(nullptr) : nlohmann::json(v); };
  return {{"source", schedstat ? "schedstat" : "cpu_time"},
          {"ranks", per_rank},
          {"steal_fraction", or_null(steal)},
          {"load_average_start", or_null(start)},
          {"load_average_end", or_null(end)},
          {"threshold_wait_fraction", kContendedWaitFraction},
          {"threshold_steal_fraction", kContendedStealFraction},
          {"verdict", s.contended ? "contended" : s.judged ? "quiet" : "too_short"},
          {"warning", s.contended ? nlohmann::json(s.warning) : nlohmann::json(nullptr)}};
}

}  // namespace scalelab
