// Whether this process received the CPU it asked for while it measured something: the run-queue
// wait of each of its threads (/proc/self/task/*/schedstat, field 2: time runnable but not
// running), falling back to process CPU time against wall time where the kernel has no schedstat,
// and the machine's steal time (/proc/stat) where a hypervisor reports it. Timings taken while a
// rank waited for a core describe the other processes on the machine, not the machine.
//
//   CpuShareMeter meter;                 // samples now
//   ... measure ...
//   const RankLoad mine = meter.stop(threads);   // this rank's figures
//   // gather every rank's RankLoad (apps/scalelab/load_report.h), then:
//   const LoadSummary s = summarize_load(all_ranks);
//   if (s.contended) std::cerr << "warning: " << s.warning << "\n";
//
// The parsers and the arithmetic take text and numbers, so they are tested on synthetic inputs.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace scalelab {

// A rank counts as contended when one of its threads spent more than this share of the wall time
// runnable but waiting on a run queue. Why 20%: on a quiet machine a busy thread waits only for
// kernel threads and interrupts, well under 5% of its time; one other busy process per core
// makes it wait about half of it. 20% sits between the two with room on both sides, and a rank
// slowed by a fifth already moves speed-ups and prediction errors by more than the lessons'
// differences (a scaling efficiency of 91% vs 86%, a prediction's 10% target).
inline constexpr double kContendedWaitFraction = 0.20;
// Without schedstat: a rank is contended when its process CPU time is below this share of wall
// time x threads it runs (the same 20% lost). Only meaningful for ranks that compute all along.
inline constexpr double kContendedCpuShare = 1.0 - kContendedWaitFraction;
// The machine counts as contended when the hypervisor took more than this share of all CPUs'
// time (steal). 10%: steal slows every process alike, so it hides in no comparison, and a
// hypervisor rarely takes more than a few percent from an idle neighbour's host.
inline constexpr double kContendedStealFraction = 0.10;

// Measurements shorter than this are not judged (verdict "too_short"): the scheduler hands out
// timeslices of a few milliseconds, so over a fraction of a second one slice given to another
// process moves the wait fraction by tens of percent; such runs' timings mean little anyway.
inline constexpr double kMinJudgedSeconds = 1.0;

// One /proc/<pid>/task/<tid>/schedstat line: "run_ns wait_ns timeslices".
struct SchedStat {
  double run_s = 0;   // time on a CPU
  double wait_s = 0;  // time runnable, waiting on a run queue
  double slices = 0;  // times run on a CPU; stays 0 where the kernel keeps no run-queue statistics
};
[[nodiscard]] std::optional<SchedStat> parse_schedstat(std::string_view text);

// The first ("cpu ") line of /proc/stat: all CPUs' time and the part stolen by a hypervisor, in
// clock ticks. steal is absent (0) on kernels or machines that do not report it.
struct CpuTicks {
  double total = 0;
  double steal = 0;
};
[[nodiscard]] std::optional<CpuTicks> parse_proc_stat(std::string_view text);

// One reading of this process and the machine.
struct CpuSample {
  double wall_s = 0;                   // steady clock
  double process_cpu_s = 0;            // CLOCK_PROCESS_CPUTIME_ID
  std::map<long, SchedStat> threads;   // tid -> schedstat; empty without schedstat
  std::optional<CpuTicks> machine;     // /proc/stat
  double load_average = -1;            // 1-minute, /proc/loadavg; -1 when unreadable
};
[[nodiscard]] CpuSample read_cpu_sample();

// What one rank received between two samples.
struct RankLoad {
  int rank = 0;
  double wall_s = 0;
  double cpu_s = 0;             // process CPU time, all threads
  int threads = 1;              // threads the rank is entitled to run (its --threads)
  bool schedstat = false;       // wait_fraction from schedstat (else from CPU time)
  double wait_fraction = 0;     // its most-waiting thread's run-queue wait / wall time
  double cpu_share = 1;         // that thread's run / (run + wait): the share of a core it got while it wanted one
  double steal_fraction = -1;   // machine steal / all CPU time; -1 when not reported
  double load_average_start = -1;
  double load_average_end = -1;
};
// The figures between `start` and `end` (threads started in between count from zero). schedstat
// counts only where its timeslice counts move: a kernel that keeps no run-queue statistics
// reports a wait of 0 there, and CPU time against wall time stands in.
[[nodiscard]] RankLoad rank_load(const CpuSample& start, const CpuSample& end, int threads);

// The verdict over every rank, and the one warning line to print when contended.
struct LoadSummary {
  bool judged = false;     // some rank measured at least kMinJudgedSeconds
  bool contended = false;
  std::string warning;  // "rank 1 received 41% of a core ...; these timings do not describe this machine"
};
[[nodiscard]] LoadSummary summarize_load(const std::vector<RankLoad>& ranks);
// The "load" object of a result file (docs/results-schema.md): per rank figures, steal, the load
// average at start and end, thresholds, verdict ("quiet", "contended", or "too_short"
// when every rank measured less than kMinJudgedSeconds) and warning.
[[nodiscard]] nlohmann::json load_json(const std::vector<RankLoad>& ranks);

// Samples at construction; stop() returns this rank's figures since then.
class CpuShareMeter {
 public:
  CpuShareMeter() : start_(read_cpu_sample()) {}
  [[nodiscard]] RankLoad stop(int threads = 1) const { return rank_load(start_, read_cpu_sample(), threads); }

 private:
  CpuSample start_;
};

}  // namespace scalelab
