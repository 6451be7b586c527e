// A packed JPEG data set (data/jpeg_dataset.h) as a training Dataset: fill() reads, decodes and
// augments each sample it is asked for (data/jpeg_sample.h), so the batch loader's worker threads
// (data/loader.h, `train --loader-workers N`) are the input pipeline and the training step waits
// for them when they are slower than the model (the "data wait" of the timeline and the epoch
// records). Training samples are augmented (simple or complex) as a function of the seed and the
// sample's index and drawn afresh each epoch (fill_for_epoch), whatever the loader's thread count.
// Evaluation samples get the centred crop without chance.
//
//   JpegTrainingSet train("fm-jpeg", {.augment = Augment::simple, .crop = 28}, "fm-jpeg train");
//   train.fill(indices, images /* n * 1 * 28 * 28 */, labels);
//
// A sample that cannot be decoded, or of another size than the set's, stops training with one
// line naming the file and the sample (bad_sample in data/jpeg_sample.h), or with skip_bad the next
// good sample of the set takes its place and skipped_samples() counts it.
#pragma once
#include <atomic>
#include <cstdint>
#include <string>

#include "data/dataset.h"
#include "data/jpeg_dataset.h"
#include "data/load.h"
#include "data/pipeline_augment.h"

namespace scalelab::data {

struct JpegSetOptions {
  Augment augment = Augment::simple;
  JpegIdct idct = JpegIdct::accurate;
  int crop = 0;             // output width and height; 0: 7/8 of the set's image size
  std::uint64_t seed = 42;
  bool training = true;     // random augmentation; false: the centred crop (evaluation)
  bool skip_bad = false;    // a bad sample: replaced by the next good one and counted, not an error
};

class JpegTrainingSet final : public Dataset {
 public:
  // Opens `dir` (errors as JpegDataset's); a crop that does not fit the images is a usage error
  // naming "crop".
  JpegTrainingSet(const std::string& dir, const JpegSetOptions& options, std::string name);
  ~JpegTrainingSet() override;
  JpegTrainingSet(const JpegTrainingSet&) = delete;
  JpegTrainingSet& operator=(const JpegTrainingSet&) = delete;

  [[nodiscard]] std::string name() const override { return name_; }
  [[nodiscard]] std::size_t size() const override { return set_.size(); }
  [[nodiscard]] ImageShape shape() const override;
  [[nodiscard]] int classes() const override { return static_cast<int>(set_.index().classes); }
  // Epoch 0's augmentation.
  void fill(std::span<const std::size_t> indices, float* images, std::int32_t* labels) const override;
  void fill_for_epoch(std::uint64_t epoch, std::span<const std::size_t> indices, float* images,
                      std::int32_t* labels) const override;
  [[nodiscard]] std::size_t skipped_samples() const override { return skipped_.load(); }
  [[nodiscard]] const JpegDataset& jpegs() const { return set_; }

 private:
  JpegDataset set_;
  JpegSetOptions options_;
  std::string name_;
  int fd_ = -1;
  mutable std::atomic<std::size_t> skipped_{0};
};

// `train --dataset jpeg:DIR`: the training set DIR and its test set DIR/test (both made by
// `scalelab data make-jpeg`, the test set with --split test), with spec's augment, decode, crop and
// seed. A missing DIR/test is an input error saying how to make it. register_jpeg_datasets() makes
// load_dataset() take "jpeg:" names (data/load.h).
[[nodiscard]] DatasetSplits load_jpeg_splits(const DatasetSpec& spec);
void register_jpeg_datasets();

}  // namespace scalelab::data
