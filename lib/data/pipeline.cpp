// The JPEG input pipeline's workers and bounded queue (see pipeline.h).
#include "data/pipeline.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "core/error.h"
#include "core/limits.h"

namespace scalelab::data {
namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

}  // namespace

std::string name_of(JpegIdct d) { return d == JpegIdct::accurate ? "accurate" : "fast"; }

Pipeline::Pipeline(const JpegDataset& set, std::vector<std::size_t> stream, const PipelineOptions& options)
    : set_(set), stream_(std::move(stream)), options_(options) {
  const int side = static_cast<int>(std::min(set.index().width, set.index().height));
  if (options_.crop == 0) options_.crop = std::max(1, side * 7 / 8);
  if (options_.workers < 1 || options_.workers > 256) {
    throw_parameter(ErrorKind::usage, "loader_workers", std::to_string(options_.workers) + ": give 1..256 worker threads");
  }
  if (options_.batch < 1) throw_parameter(ErrorKind::usage, "batch_size", std::to_string(options_.batch) + ": a batch needs at least one sample");
  if (options_.crop < 1 || options_.crop > side) {
    throw_parameter(ErrorKind::usage, "crop", std::to_string(options_.crop) + ": the crop must fit the data set's " +
                                                  std::to_string(set.index().width) + "x" +
                                                  std::to_string(set.index().height) + " images (1.." +
                                                  std::to_string(side) + ")");
  }
  if (options_.prefetch < 0 || options_.prefetch > limits::kMaxPrefetch) {
    throw_parameter(ErrorKind::usage, "prefetch", std::to_string(options_.prefetch) + ": give 0 (automatic) to " +
                                                      std::to_string(limits::kMaxPrefetch) + " batches");
  }
  if (options_.prefetch == 0) options_.prefetch = 2 * options_.workers;
  for (std::size_t i : stream_) {
    if (i >= set.size()) throw_usage("pipeline stream: sample " + std::to_string(i) + " is past the data set's " + std::to_string(set.size()));
  }
  shape_ = {static_cast<int>(set.index().channels), options_.crop, options_.crop};
  const auto b = static_cast<std::size_t>(options_.batch);
  batches_ = (stream_.size() + b - 1) / b;
  threads_.reserve(static_cast<std::size_t>(options_.workers));
  for (int w = 0; w < options_.workers; ++w) threads_.emplace_back([this] { work(); });
}

Pipeline::~Pipeline() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  room_.notify_all();
  for (auto& t : threads_) t.join();
}

void Pipeline::work() {
  const int fd = ::open(set_.images_path().c_str(), O_RDONLY | O_CLOEXEC);
  const int open_errno = errno;
  SampleScratch scratch;
  std::vector<float> sample(shape_.elements());
  for (;;) {
    std::size_t b = 0;
    Slot slot;
    {
      std::unique_lock lock(mutex_);
      room_.wait(lock, [&] {
        return stop_ || next_claim_ >= batches_ || next_claim_ < next_consume_ + static_cast<std::size_t>(options_.prefetch);
      });
      if (stop_ || next_claim_ >= batches_) break;
      b = next_claim_++;
      // A batch the consumer gave back: its tensor is filled in place, with no allocation.
      if (!spare_.empty()) {
        slot.batch = std::move(spare_.back());
        spare_.pop_back();
        slot.batch.skipped.clear();  // an error before produce() must not count its old skips
      }
    }
    StageSeconds t;
    try {
      if (fd < 0) throw_input(set_.images_path() + ": cannot be opened (" + std::strerror(open_errno) + ")");
      produce(b, fd, scratch, sample, slot, t);
    } catch (...) {
      slot.error = std::current_exception();
    }
    {
      std::lock_guard lock(mutex_);
      seconds_.read += t.read;
      seconds_.decode += t.decode;
      seconds_.augment += t.augment;
      seconds_.batch += t.batch;
      skipped_ += slot.batch.skipped.size();
      done_.emplace(b, std::move(slot));
    }
    ready_.notify_all();
  }
  if (fd >= 0) ::close(fd);
}

void Pipeline::produce(std::size_t b, int fd, SampleScratch& scratch, std::vector<float>& sample, Slot& slot,
                       StageSeconds& t) const {
  const std::size_t first = b * static_cast<std::size_t>(options_.batch);
  const std::size_t last = std::min(stream_.size(), first + static_cast<std::size_t>(options_.batch));
  const JpegIndex& index = set_.index();
  Batch& out = slot.batch;
  out.index = b;
  out.labels.clear();
  out.samples.clear();
  out.skipped.clear();
  out.images.resize((last - first) * shape_.elements());
  out.labels.reserve(last - first);
  for (std::size_t p = first; p < last; ++p) {
    const std::size_t i = stream_[p];
    const AugmentParams params = augment_params(options_.augment, options_.seed, p, static_cast<int>(index.width),
                                                static_cast<int>(index.height), options_.crop);
    try {
      load_jpeg_sample(set_, fd, i, params, options_.idct, options_.cold, scratch, sample.data(), t);
    } catch (const BadSample& bad) {
      if (options_.on_bad == BadSamples::stop) bad_sample(set_, i, bad.what, true);
      out.skipped.push_back(i);
      continue;
    }
    const auto t0 = Clock::now();
    std::copy(sample.begin(), sample.end(), out.images.begin() + static_cast<std::ptrdiff_t>(out.samples.size() * shape_.elements()));
    out.labels.push_back(static_cast<std::int32_t>(index.entries[i].label));
    out.samples.push_back(i);
    t.batch += since(t0);
  }
  out.count = static_cast<int>(out.samples.size());
  out.images.resize(out.samples.size() * shape_.elements());
}

bool Pipeline::next(Batch& out) {
  std::unique_lock lock(mutex_);
  if (next_consume_ >= batches_) return false;
  ready_.wait(lock, [&] { return done_.count(next_consume_) != 0; });
  auto node = done_.extract(next_consume_);
  ++next_consume_;
  if (!node.mapped().error) {
    // The caller's previous batch goes back to the workers for reuse (allocating and freeing a
    // batch's tensor each time made the rate depend on the allocator's state).
    std::swap(out, node.mapped().batch);
    if (spare_.size() < static_cast<std::size_t>(options_.prefetch) + threads_.size() && !node.mapped().batch.images.empty()) {
      spare_.push_back(std::move(node.mapped().batch));
    }
  }
  lock.unlock();
  room_.notify_all();
  if (node.mapped().error) std::rethrow_exception(node.mapped().error);
  return true;
}

StageSeconds Pipeline::stage_seconds() const {
  std::lock_guard lock(mutex_);
  return seconds_;
}

std::size_t Pipeline::skipped() const {
  std::lock_guard lock(mutex_);
  return skipped_;
}

}  // namespace scalelab::data
