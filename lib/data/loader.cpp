// BatchLoader (data/loader.h). One mutex guards the slot states; filling happens outside it.
// A worker claims the next step only when a slot is free, so at most `depth` batches are
// prepared ahead of the consumer.
#include "data/loader.h"

#include "core/error.h"
#include "core/timer.h"

namespace scalelab::data {

BatchLoader::BatchLoader(const Dataset& dataset, std::size_t batch, int workers, int depth)
    : dataset_(dataset), batch_(batch) {
  if (batch_ == 0) throw_parameter(ErrorKind::usage, "batch_size", "0: a batch needs at least one sample");
  if (workers < 1) throw_usage("loader: at least one worker thread is needed");
  if (depth < 1) throw_usage("loader: the prefetch depth must be at least 1");
  slots_.resize(static_cast<std::size_t>(depth));
  for (Slot& s : slots_) {
    s.images.resize(batch_ * dataset_.shape().elements());
    s.labels.resize(batch_);
  }
  for (int i = 0; i < workers; ++i) workers_.emplace_back([this] { work(); });
}

BatchLoader::~BatchLoader() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  cv_.notify_all();
  for (auto& t : workers_) t.join();
}

void BatchLoader::start_epoch(std::span<const std::size_t> indices, std::size_t steps, std::uint64_t epoch) {
  if (steps * batch_ > indices.size()) {
    throw_usage("loader: " + std::to_string(steps) + " steps of " + std::to_string(batch_) + " need more than the " +
                std::to_string(indices.size()) + " indices given");
  }
  {
    std::unique_lock<std::mutex> lock(mutex_);
    // A worker still filling a slot of an abandoned epoch finishes first; then every slot is free.
    cv_.wait(lock, [&] {
      for (const Slot& s : slots_) {
        if (s.state == SlotState::filling) return false;
      }
      return true;
    });
    for (Slot& s : slots_) s.state = SlotState::free;
    indices_ = indices;
    steps_ = steps;
    next_claim_ = 0;
    next_deliver_ = 0;
    epoch_ = epoch;
    ++generation_;
  }
  cv_.notify_all();
}

void BatchLoader::work() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    Slot* slot = nullptr;
    cv_.wait(lock, [&] {
      if (stop_) return true;
      if (next_claim_ >= steps_) return false;
      for (Slot& s : slots_) {
        if (s.state == SlotState::free) {
          slot = &s;
          return true;
        }
      }
      return false;
    });
    if (stop_) return;
    const std::size_t step = next_claim_++;
    const std::uint64_t generation = generation_;
    const std::uint64_t epoch = epoch_;
    slot->state = SlotState::filling;
    const auto first = indices_.subspan(step * batch_, batch_);
    lock.unlock();
    try {
      dataset_.fill_for_epoch(epoch, first, slot->images.data(), slot->labels.data());
    } catch (...) {
      lock.lock();
      error_ = std::current_exception();
      slot->state = SlotState::free;
      cv_.notify_all();
      continue;
    }
    lock.lock();
    if (generation != generation_) {  // cannot happen: start_epoch waits for filling slots
      slot->state = SlotState::free;
      cv_.notify_all();
      continue;
    }
    slot->batch = Batch{step, batch_, slot->images.data(), slot->labels.data(),
                        static_cast<int>(slot - slots_.data())};
    slot->state = SlotState::ready;
    cv_.notify_all();
  }
}

const Batch& BatchLoader::next() {
  const double t0 = now_seconds();
  std::unique_lock<std::mutex> lock(mutex_);
  if (next_deliver_ >= steps_) throw_runtime("loader: next() called after the epoch's last batch");
  Slot* found = nullptr;
  cv_.wait(lock, [&] {
    if (error_) return true;
    for (Slot& s : slots_) {
      if (s.state == SlotState::ready && s.batch.step == next_deliver_) {
        found = &s;
        return true;
      }
    }
    return false;
  });
  if (error_) std::rethrow_exception(error_);
  found->state = SlotState::taken;
  ++next_deliver_;
  wait_seconds_ += now_seconds() - t0;
  return found->batch;
}

void BatchLoader::release(const Batch& batch) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    slots_.at(static_cast<std::size_t>(batch.slot)).state = SlotState::free;
  }
  cv_.notify_all();
}

double BatchLoader::take_wait_seconds() {
  std::lock_guard<std::mutex> lock(mutex_);
  const double w = wait_seconds_;
  wait_seconds_ = 0.0;
  return w;
}

}  // namespace scalelab::data
