// OverlappedAverager (train/overlapped_averager.h).
#include "train/overlapped_averager.h"

#include "core/timer.h"

namespace scalelab::train {

OverlappedAverager::OverlappedAverager(comm::Communicator& comm, const std::string& algorithm, nn::StepPlan plan,
                                       std::span<float> grads)
    : averager_(comm, algorithm, std::move(plan)),
      grads_(grads),
      threaded_(comm.size() > 1),
      ready_(averager_.plan()),
      spans_(averager_.plan().size(), {0.0, 0.0}) {
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
  if (!ready_.mark(param) || !threaded_) return;
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    release_complete();
  }
  work_.notify_one();
}

void OverlappedAverager::release_complete() {
  // Strictly in plan order: every rank reduces the same buckets in the same sequence.
  while (released_ < spans_.size() && ready_.complete(released_)) ++released_;
}

void OverlappedAverager::finish() {
  if (threaded_) {
    std::unique_lock<std::mutex> lock(mutex_);
    released_ = spans_.size();  // whatever was never reported is final now
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
  ready_.reset();  // the next step starts afresh
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
