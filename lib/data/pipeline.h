// The JPEG input pipeline: N worker threads turn a packed JPEG data set (data/jpeg_dataset.h) into
// batches of float32 tensors in NCHW layout, through four timed stages per sample:
//   read     the JPEG's bytes from images.bin (pread: the page cache, or with `cold` the range is
//            dropped from it first with posix_fadvise(DONTNEED), so the disk is read)
//   decode   libjpeg-turbo, accurate or fast IDCT, at a reduced scale when the crop allows
//   augment  simple or complex (data/pipeline_augment.h)
//   batch    the sample copied into its batch's tensor, its label beside it
// Workers take whole batches in order and at most `prefetch` batches run ahead of the consumer
// (the bounded queue). Sample p of the stream is augmented as a function of (seed, p) only, so the
// batches are the same whatever the worker count. A sample libjpeg-turbo cannot decode (not a
// JPEG, truncated) or of another size than the set's stops the pipeline with an input error
// naming the file, the sample and the fix (BadSamples::stop), or is left out of its batch and
// counted (BadSamples::skip).
//
//   JpegDataset set("fm-jpeg");
//   Pipeline pipe(set, stream /* sample indices */, {.workers = 2, .augment = Augment::complex});
//   Batch b;
//   while (pipe.next(b)) train_on(b.images.data(), b.labels.data(), b.count);
//   StageSeconds t = pipe.stage_seconds();
#pragma once
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "data/dataset.h"
#include "data/jpeg_codec.h"
#include "data/jpeg_dataset.h"
#include "data/jpeg_sample.h"
#include "data/pipeline_augment.h"

namespace scalelab::data {

enum class BadSamples { stop, skip };
[[nodiscard]] std::string name_of(JpegIdct d);  // "accurate", "fast"

struct PipelineOptions {
  int workers = 1;
  Augment augment = Augment::simple;
  JpegIdct idct = JpegIdct::accurate;
  int batch = 64;
  int crop = 0;                 // output width and height; 0: 7/8 of the set's image size
  std::uint64_t seed = 42;
  BadSamples on_bad = BadSamples::stop;
  bool cold = false;            // drop each JPEG from the page cache before reading it
  int prefetch = 0;             // batches ready or in flight ahead of the consumer; 0: 2 per worker
};

struct Batch {
  std::size_t index = 0;             // batch number in the stream
  int count = 0;                     // samples in it (fewer than asked when some were skipped)
  std::vector<float> images;         // count * channels * crop * crop floats, NCHW
  std::vector<std::int32_t> labels;  // count
  std::vector<std::size_t> samples;  // the data set's index of each sample
  std::vector<std::size_t> skipped;  // the data set's indices of the bad samples left out
};

// Seconds spent in each stage: StageSeconds (data/jpeg_sample.h), summed over the workers (so up
// to workers x the wall time).

class Pipeline {
 public:
  // `stream` lists the data set's samples in the order they are delivered (indices < set.size()).
  // Throws a usage error naming the option (workers, batch_size, crop, prefetch) when one is out
  // of range.
  Pipeline(const JpegDataset& set, std::vector<std::size_t> stream, const PipelineOptions& options);
  ~Pipeline();
  Pipeline(const Pipeline&) = delete;
  Pipeline& operator=(const Pipeline&) = delete;

  // The next batch into `out` (its storage reused); false after the last. Rethrows a worker's
  // error (a bad sample under BadSamples::stop) when its batch is reached.
  bool next(Batch& out);
  [[nodiscard]] ImageShape output_shape() const { return shape_; }
  [[nodiscard]] std::size_t batches() const { return batches_; }
  [[nodiscard]] StageSeconds stage_seconds() const;
  [[nodiscard]] std::size_t skipped() const;

 private:
  struct Slot {
    Batch batch;
    std::exception_ptr error;
  };
  void work();
  void produce(std::size_t b, int fd, SampleScratch& scratch, std::vector<float>& sample, Slot& slot, StageSeconds& t) const;

  const JpegDataset& set_;
  std::vector<std::size_t> stream_;
  PipelineOptions options_;
  ImageShape shape_;
  std::size_t batches_ = 0;

  mutable std::mutex mutex_;
  std::condition_variable room_;   // a worker may claim another batch
  std::condition_variable ready_;  // the consumer's batch is ready
  std::size_t next_claim_ = 0;
  std::size_t next_consume_ = 0;
  bool stop_ = false;
  std::map<std::size_t, Slot> done_;
  std::vector<Batch> spare_;  // batches the consumer gave back, for the workers to fill again
  StageSeconds seconds_;
  std::size_t skipped_ = 0;
  std::vector<std::thread> threads_;
};

}  // namespace scalelab::data
