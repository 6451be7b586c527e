// The trainer's timeline, like Horovod's Timeline: every rank records the phases of every step
// (data wait, forward, backward, allreduce, optimizer; evaluation and checkpoint per epoch) on its
// own track (with overlap, each bucket's allreduce on a second lane, beside backward), and at the end rank 0 gathers all tracks and writes one Chrome trace JSON file
// (core/trace.h) that Perfetto or chrome://tracing opens. Times are microseconds since a moment
// all ranks share (the steady clock is system-wide on one machine; across nodes each rank's
// origin is its own time of the barrier before training).
#pragma once
#include <string>

#include "comm/communicator.h"
#include "core/trace.h"

namespace scalelab::train {

enum class Phase { data_wait, forward, backward, allreduce, optimizer, evaluate, checkpoint };

class StepTimeline {
 public:
  // Disabled timelines record nothing and cost one branch per span.
  StepTimeline(bool enabled, int rank, std::size_t expected_events);
  // The origin: call on every rank right after a barrier.
  void start(double now_s) { origin_s_ = now_s; }
  // Lanes inside a rank's track: the training loop, and the CPU engine's communication thread
  // (each gradient bucket's allreduce while backward runs, train/overlapped_averager.h).
  enum Lane { loop = 0, communication = 1 };
  void span(Phase phase, double begin_s, double end_s, Lane lane = loop) {
    if (enabled_) trace_.add(static_cast<int>(phase), rank_, lane, (begin_s - origin_s_) * 1e6, (end_s - begin_s) * 1e6);
  }
  [[nodiscard]] bool enabled() const { return enabled_; }
  // Collective: ships every rank's events to rank 0, which writes `path`.
  void gather_and_write(comm::Communicator& comm, const std::string& path);
  [[nodiscard]] const Trace& trace() const { return trace_; }

 private:
  bool enabled_;
  int rank_;
  double origin_s_ = 0;
  Trace trace_;
};

}  // namespace scalelab::train
