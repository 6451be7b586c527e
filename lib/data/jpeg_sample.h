// One sample of a packed JPEG data set (data/jpeg_dataset.h) made into a float32 tensor: its bytes
// read from images.bin, its header checked against the set, decoded by libjpeg-turbo and
// augmented, each stage timed. The one place both the timed input pipeline (data/pipeline.h) and
// the training data set (data/jpeg_training_set.h) turn a JPEG into a sample.
//
//   SampleScratch scratch;                     // per thread: reused, so a sample allocates nothing
//   StageSeconds t;
//   load_jpeg_sample(set, fd, i, augment_params(...), JpegIdct::fast, false, scratch, chw, t);
//
// A sample libjpeg-turbo cannot decode (not a JPEG, truncated) or of another size than the set's
// throws BadSample; bad_sample() makes that the one-line input error naming the file and sample.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "data/jpeg_codec.h"
#include "data/jpeg_dataset.h"
#include "data/pipeline_augment.h"

namespace scalelab::data {

// Seconds spent in each stage of the input pipeline (summed over its workers where there are several).
struct StageSeconds {
  double read = 0, decode = 0, augment = 0, batch = 0;
  [[nodiscard]] double total() const { return read + decode + augment + batch; }
};

struct SampleScratch {
  std::vector<std::uint8_t> bytes;
  Image decoded;
};

// A sample that cannot be used; `what` says why.
struct BadSample {
  std::string what;
};

// Reads sample `i` through `fd` (images.bin, open for reading), checks and decodes it with `idct`
// at p.decode_scale, and writes its channels * p.out * p.out floats (CHW) to `chw`. With `cold`
// the JPEG's bytes are dropped from the page cache first (posix_fadvise), so the disk is read.
// Adds each stage's seconds to `t` (read, decode, augment). Throws BadSample, or a runtime error
// when images.bin cannot be read.
void load_jpeg_sample(const JpegDataset& set, int fd, std::size_t i, const AugmentParams& p, JpegIdct idct, bool cold,
                      SampleScratch& scratch, float* chw, StageSeconds& t);

// The input error for a bad sample: the file, the sample, what is wrong and the fix. `skippable`:
// the caller could skip bad samples (the fix then says so).
[[noreturn]] void bad_sample(const JpegDataset& set, std::size_t i, const std::string& what, bool skippable);

}  // namespace scalelab::data
