// OverlappedAverager (train/overlapped_averager.h).
#include "train/overlapped_averager.h"

#include <algorithm>

#include "core/error.h"
#include "core/timer.h"

namespace scalelab::train {

OverlappedAverager::OverlappedAverager(comm::Communicator& comm, const std::string& algorithm, nn::StepPlan plan,
                                       std::span<float> grads)
    : averager_(comm, algorithm, std::move(plan)), grads_(grads), threaded_(comm.size() > 1) {
  const nn::StepPlan& p = averager_.plan();
  pending_.assign(p.size(), 0);
  param_done_.assign(p.param_count(), 0);
  for (std::size_t i = 0; i < p.param_count(); ++i) ++pending_[p.bucket_of(i)];
  spans_.assign(p.size(), {0.0, 0.0});
  if (threaded_) thread_ = std::thread([this] { run(); });
}

OverlappedAverager::~OverlappedAverager() {
  if (!thread_.joinable()) return;
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  work_.notify_one();
  thread_.join();
}

void OverlappedAverager::param_ready(std::size_t param) {
  if (param >= param_done_.size()) {
    throw_runtime("gradient averaging: parameter index " + std::to_string(param) + " is out of range (the model has " +
                  std::to_string(param_done_.size()) + ")");
  }
  if (param_done_[param]) {
    throw_runtime("gradient averaging: parameter " + std::to_string(param) +
                  " was reported final twice in one step; call finish() once per step");
  }
  param_done_[param] = 1;
  const std::size_t k = averager_.plan().bucket_of(param);
  --pending_[k];
  if (pending_[k] > 0 || !threaded_) return;
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    release_complete();
  }
  work_.notify_one();
}

void OverlappedAverager::release_complete() {
  // Strictly in plan order: every rank reduces the same buckets in the same sequence.
  while (released_ < pending_.size() && pending_[released_] == 0) ++released_;
}

void OverlappedAverager::finish() {
  const nn::StepPlan& p = averager_.plan();
  if (threaded_) {
    std::unique_lock<std::mutex> lock(mutex_);
    released_ = p.size();  // whatever was never reported is final now
    work_.notify_one();
    done_.wait(lock, [this] { return finished_ == released_ || error_ != nullptr; });
    if (error_) {
      const std::exception_ptr e = error_;
      stop_ = true;
      lock.unlock();
      work_.notify_one();
      std::rethrow_exception(e);
    }
    released_ = finished_ = 0;
  }
  // The next step starts afresh.
  std::fill(param_done_.begin(), param_done_.end(), 0);
  std::fill(pending_.begin(), pending_.end(), 0);
  for (std::size_t i = 0; i < p.param_count(); ++i) ++pending_[p.bucket_of(i)];
}

void OverlappedAverager::run() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    work_.wait(lock, [this] { return stop_ || finished_ < released_; });
    if (stop_) return;
    const std::size_t k = finished_;
    lock.unlock();
    std::exception_ptr failed;
    const double begin = now_seconds();
    try {
      averager_.average_bucket(k, grads_);
    } catch (...) {
      failed = std::current_exception();
    }
    const double end = now_seconds();
    lock.lock();
    spans_[k] = {begin, end};
    if (failed) {
      error_ = failed;
      done_.notify_one();
      return;
    }
    ++finished_;
    if (finished_ == released_) done_.notify_one();
  }
}

std::size_t OverlappedAverager::finished_buckets() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return finished_;
}

std::string OverlappedAverager::describe() const {
  return averager_.describe() + ", on a communication thread as backward produces them";
}

}  // namespace scalelab::train
