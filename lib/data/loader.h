// The batch loader: worker threads turn a shard's indices into float32 batches ahead of the
// training loop, through a bounded prefetch queue of batch buffers that are allocated once and
// reused (no allocation per step). Batches come out in order. The time the loop spends blocked in
// next() is the "data wait" of the timeline and of the per-epoch records.
//
//   BatchLoader loader(dataset, batch, /*workers=*/1, /*depth=*/2);
//   loader.start_epoch(sampler.indices(), steps);
//   for (step...) { const Batch& b = loader.next(); ...use b.images, b.labels...; loader.release(b); }
#pragma once
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <mutex>
#include <span>
#include <thread>
#include <vector>

#include "data/dataset.h"

namespace scalelab::data {

struct Batch {
  std::size_t step = 0;       // position in the epoch
  std::size_t size = 0;       // samples
  const float* images = nullptr;        // size * shape.elements() floats, NCHW
  const std::int32_t* labels = nullptr; // size labels
  int slot = -1;              // the buffer it lives in; give it back with release()
};

class BatchLoader {
 public:
  BatchLoader(const Dataset& dataset, std::size_t batch, int workers, int depth);
  ~BatchLoader();
  BatchLoader(const BatchLoader&) = delete;
  BatchLoader& operator=(const BatchLoader&) = delete;

  // Begins an epoch of `steps` batches of consecutive indices from `indices` (which must stay
  // alive and unchanged until the epoch is consumed). The previous epoch must be fully consumed.
  // `epoch` goes to the dataset's fill_for_epoch (fresh random augmentation each epoch).
  void start_epoch(std::span<const std::size_t> indices, std::size_t steps, std::uint64_t epoch = 0);
  // The next batch in order, blocking until a worker has filled it.
  [[nodiscard]] const Batch& next();
  // Returns the batch's buffer to the workers.
  void release(const Batch& batch);
  // Seconds spent blocked in next() since the last call, and reset.
  [[nodiscard]] double take_wait_seconds();
  [[nodiscard]] std::size_t batch_size() const { return batch_; }

 private:
  enum class SlotState { free, filling, ready, taken };
  struct Slot {
    std::vector<float> images;
    std::vector<std::int32_t> labels;
    SlotState state = SlotState::free;
    Batch batch;
  };
  void work();

  const Dataset& dataset_;
  std::size_t batch_;
  std::vector<Slot> slots_;
  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::span<const std::size_t> indices_;
  std::size_t steps_ = 0;
  std::size_t next_claim_ = 0;    // next step a worker will fill
  std::size_t next_deliver_ = 0;  // next step next() returns
  std::uint64_t generation_ = 0;  // epoch counter: workers recheck after start_epoch
  std::uint64_t epoch_ = 0;       // the caller's epoch number, for the dataset
  bool stop_ = false;
  std::exception_ptr error_;
  double wait_seconds_ = 0.0;
};

}  // namespace scalelab::data
