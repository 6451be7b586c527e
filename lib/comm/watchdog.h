// The stall watchdog, in the spirit of Horovod's stall inspector: a rank blocked in a collective
// because a peer stopped (SIGSTOP, a hung node, a launcher that did not kill the job when a peer
// died) would otherwise wait forever. The loop (training, benchmark) calls beat() as it enters
// each phase; a thread checks once a second and, after `timeout_s` without a beat, prints one
// line and ends the process with exit code 1 (mpirun then ends the others). A killed peer is
// normally noticed by mpirun within seconds; this catches the rest.
//
//   StallWatchdog w(config.stall_timeout_s, comm.rank(), comm.size(), "training");  // 0 s: disabled
//   ... w.beat("allreduce", step) ...
//
// Naming the rank that stopped. A rank blocked inside MPI cannot ask its peers, so the ranks
// share a side channel that works while a peer is stopped or dead: files. Each rank maps
//   ${TMPDIR:-/tmp}/scalelab-heartbeat-<job id>/rank-<r>
// (the job id is Open MPI's PMIX_NAMESPACE or OMPI_MCA_orte_ess_jobid; no launcher: no files)
// shared into memory and holds there one small binary record: the phase and step of its last
// beat and that beat's wall time (written by beat(), so a peer sees it at once), and a stamp its
// watchdog thread renews once a second. That thread keeps stamping while the main thread is
// blocked, so a stamp that grows old means the process itself is stopped or dead. A rank whose
// own thread finds it has not run for seconds knows it was the one stopped and says so. On timeout a rank reads its peers' files and says which stopped and
// where each was:
//   error: rank 0: no progress in training for 15 s: rank 1 stopped making progress 16 s ago
//   (last in allreduce, step 12; its process stopped responding); rank 0 was waiting in
//   allreduce, step 13; ending this rank (stall timeout)
// Where the files cannot be read (ranks on hosts without a shared $TMPDIR) the line says
// "another rank has stopped or died" and this rank's own phase. A rank that ends normally removes
// its own file, and the folder when it is the last one there; after a stall the files of the
// job's ranks stay (a few bytes each, so that ranks timing out later still read them) until
// $TMPDIR is cleaned.
#pragma once
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

#include "comm/fault_injection.h"

namespace scalelab::comm {

class StallWatchdog {
 public:
  // `what` names the work in the message ("training", "the benchmark").
  StallWatchdog(double timeout_s, int rank, int ranks, std::string what);
  ~StallWatchdog();
  StallWatchdog(const StallWatchdog&) = delete;
  StallWatchdog& operator=(const StallWatchdog&) = delete;
  // Progress: this rank now enters `phase` (a string literal: it is kept as a pointer) at `step`.
  // Lock-free. Also where SCALELAB_FAULT_AT strikes (comm/fault_injection.h), enabled or not.
  void beat(const char* phase, std::int64_t step);

  // The heartbeat folder for this job, or "" when no job id is in the environment.
  [[nodiscard]] static std::string heartbeat_dir();
  // The stall report from the heartbeat files in `dir` as rank `rank` of `ranks` sees them at
  // wall time `now`: "rank 1 stopped making progress ...; rank 0 was waiting in ...", or "" when
  // no peer's file could be read. A file not rewritten for `unresponsive_s` (unresponsive_after)
  // is a process stopped or dead. Exposed for tests.
  [[nodiscard]] static std::string describe_peers(const std::string& dir, int rank, int ranks, double now,
                                                  double unresponsive_s = 5);
  // How long without a rewrite of its heartbeat file (every second) counts as a process stopped:
  // 5 s, or under a shorter stall timeout half of it (at least 2 s), so that the stopped rank is
  // told from the waiting ones by the time the timeout ends the job.
  [[nodiscard]] static double unresponsive_after(double timeout_s);

 private:
  void watch();
  double timeout_s_;
  int rank_;
  int ranks_;
  std::string what_;
  FaultInjector fault_;
  std::string dir_;   // "" : no side channel
  std::string file_;
  void* record_ = nullptr;  // the heartbeat file, mapped shared
  std::atomic<double> last_beat_s_;       // steady clock, for the timeout
  std::atomic<double> last_beat_wall_s_;  // wall clock, for the heartbeat file
  std::atomic<const char*> phase_{"start"};
  std::atomic<std::int64_t> step_{0};
  std::mutex mutex_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace scalelab::comm
