// The stall watchdog, in the spirit of Horovod's stall inspector: a rank blocked in a collective
// because a peer stopped (SIGSTOP, a hung node, a launcher that did not kill the job when a peer
// died) would otherwise wait forever. The training loop calls beat() after every step; a thread
// checks once a second and, after `timeout_s` without a beat, prints one line naming this rank,
// the last phase it reached and the step, then ends the process with exit code 1 (mpirun then
// ends the others). A killed peer is normally noticed by mpirun within seconds; this catches the
// rest.
//
//   StallWatchdog w(config.stall_timeout_s, comm.rank());   // 0: disabled
//   ... w.beat("allreduce", step) ...
#pragma once
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>

namespace scalelab::train {

class StallWatchdog {
 public:
  StallWatchdog(double timeout_s, int rank);
  ~StallWatchdog();
  StallWatchdog(const StallWatchdog&) = delete;
  StallWatchdog& operator=(const StallWatchdog&) = delete;
  // Progress: `phase` must be a string literal (it is kept as a pointer). Lock-free.
  void beat(const char* phase, std::int64_t step);

 private:
  void watch();
  double timeout_s_;
  int rank_;
  std::atomic<double> last_beat_s_;
  std::atomic<const char*> phase_{"start"};
  std::atomic<std::int64_t> step_{0};
  std::mutex mutex_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace scalelab::train
