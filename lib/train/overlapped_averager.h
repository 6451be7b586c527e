// OverlappedAverager: gradient averaging overlapped with backward on CPU ranks, as Horovod's
// background thread and PyTorch DDP's reducer do it. It executes the same StepPlan as
// GradientAverager (train/gradient_averager.h), bucket by bucket and in the same order, but on a
// communication thread of its own: backward reports each parameter whose gradient is final
// (nn::Model::backward's on_final), and once every parameter of the next bucket is final the
// thread allreduces it while backward goes on with the layers below. finish() hands over what is
// left and waits, so the optimizer step after it sees averaged gradients. The result is bit for
// bit the one GradientAverager gives: the same collectives, on the same bytes, in the same order.
//
// MPI: only the communication thread calls MPI between a step's first param_ready() and its
// finish(), and the training loop only outside that window, so the MPI library must allow calls
// from more than one thread, one at a time (MPI_THREAD_SERIALIZED; comm/mpi_runtime.h). Nothing
// else may use the communicator inside the window (SyncBatchNorm's exchanges during backward do:
// the CPU engine turns overlap off with it).
//
// Per step, on the last micro-batch's backward:
//   model.backward(dlogits, [&](std::size_t p) { avg.param_ready(p); });
//   avg.finish();                     // before the optimizer step
//   for (auto [begin, end] : avg.last_spans()) ...   // each bucket's allreduce, for the timeline
// An error in the thread (a failed collective) is rethrown by finish(). With one rank nothing is
// reduced and no thread runs.
#pragma once
#include <condition_variable>
#include <cstddef>
#include <exception>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "train/gradient_averager.h"

namespace scalelab::train {

class OverlappedAverager {
 public:
  // grads: the flat gradient buffer the plan's offsets index (it must outlive the averager).
  OverlappedAverager(comm::Communicator& comm, const std::string& algorithm, nn::StepPlan plan, std::span<float> grads);
  // Stops the thread after the bucket it is running, if any: destroying the averager between a
  // step's first param_ready() and its finish() waits for that collective, so an error there must
  // bring the job down (comm::fail_job) rather than unwind past it. The engine's backward throws
  // only before it reports a parameter.
  ~OverlappedAverager();
  OverlappedAverager(const OverlappedAverager&) = delete;
  OverlappedAverager& operator=(const OverlappedAverager&) = delete;

  // The gradient of parameter `param` (declaration index) is final for this step. Throws a
  // runtime error for an index out of range or one reported twice in a step.
  void param_ready(std::size_t param);
  // Every bucket averaged: releases the buckets not yet complete (parameters never reported count
  // as final now) and waits for the thread. Rethrows an error the thread caught. Ends the step.
  void finish();
  // Each bucket's allreduce in the last finished step, [begin, end) in core/timer.h's now_seconds().
  [[nodiscard]] const std::vector<std::pair<double, double>>& last_spans() const { return spans_; }
  [[nodiscard]] const nn::StepPlan& plan() const { return averager_.plan(); }
  // Buckets the thread has averaged so far in this step (for tests and progress).
  [[nodiscard]] std::size_t finished_buckets() const;
  // GradientAverager's words, and that the buckets go as backward produces them.
  [[nodiscard]] std::string describe() const;

 private:
  void run();  // the communication thread
  void release_complete();  // with mutex_ held: hand the thread every bucket now complete, in order

  GradientAverager averager_;
  std::span<float> grads_;
  bool threaded_;                      // more than one rank
  nn::BucketReadiness ready_;          // which buckets backward has completed this step
  std::vector<std::pair<double, double>> spans_;  // per bucket

  mutable std::mutex mutex_;
  std::condition_variable work_, done_;
  std::size_t released_ = 0;  // buckets handed to the thread this step (a prefix of the plan)
  std::size_t finished_ = 0;  // buckets the thread has averaged this step
  bool stop_ = false;
  std::exception_ptr error_;
  std::thread thread_;
};

}  // namespace scalelab::train
