// A testing aid: SCALELAB_FAULT_AT=PHASE:RANK:SIGNAL[:N] makes rank RANK raise SIGNAL (KILL, STOP,
// TERM, ... or a number) on itself when it enters PHASE for the N-th time (default 1), so that a
// test can stop or kill one rank in a chosen phase of a real run (tests/faults/). The phases are
// those the stall watchdog is told of (comm/phases.h), e.g. broadcast, allreduce, evaluation,
// checkpoint for train and allreduce for bench; another name is a usage error. Unset: nothing happens.
//
//   FaultInjector f(comm.rank(), comm.size());  // reads the variable; a malformed value, or a rank
//                                               // the job does not have, is a usage error
//   f.enter("allreduce");                  // raises the signal when this is the chosen entry
// A rank whose chosen entry never came warns on stderr as it ends normally.
#pragma once
#include <atomic>
#include <string>

namespace scalelab::comm {

class FaultInjector {
 public:
  FaultInjector(int rank, int ranks);
  // On a run that ends normally with its fault armed but never raised (a phase this command does
  // not enter, or fewer entries than N), says so on stderr: the test relying on it had no fault.
  ~FaultInjector();
  FaultInjector(const FaultInjector&) = delete;
  FaultInjector& operator=(const FaultInjector&) = delete;
  // Counts an entry into `phase`; raises the chosen signal on the chosen entry.
  void enter(const char* phase);

 private:
  bool armed_ = false;
  std::string value_;  // the variable as given
  std::string phase_;
  int signal_ = 0;
  long nth_ = 1;
  std::atomic<long> seen_{0};
};

}  // namespace scalelab::comm
