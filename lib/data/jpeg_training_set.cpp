// A packed JPEG data set as a training Dataset (see jpeg_training_set.h).
#include "data/jpeg_training_set.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <memory>

#include "core/error.h"
#include "core/results.h"
#include "data/jpeg_sample.h"

namespace scalelab::data {

JpegTrainingSet::JpegTrainingSet(const std::string& dir, const JpegSetOptions& options, std::string name)
    : set_(dir), options_(options), name_(std::move(name)) {
  const int side = static_cast<int>(std::min(set_.index().width, set_.index().height));
  if (options_.crop == 0) options_.crop = std::max(1, side * 7 / 8);
  if (options_.crop < 1 || options_.crop > side) {
    throw_parameter(ErrorKind::usage, "crop", std::to_string(options_.crop) + ": the crop must fit " + dir + "'s " +
                                                  std::to_string(set_.index().width) + "x" +
                                                  std::to_string(set_.index().height) + " images (1.." +
                                                  std::to_string(side) + ")");
  }
  fd_ = ::open(set_.images_path().c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) throw_input(set_.images_path() + ": cannot be opened (" + std::strerror(errno) + ")");
}

JpegTrainingSet::~JpegTrainingSet() {
  if (fd_ >= 0) ::close(fd_);
}

ImageShape JpegTrainingSet::shape() const {
  return {static_cast<int>(set_.index().channels), options_.crop, options_.crop};
}

void JpegTrainingSet::fill(std::span<const std::size_t> indices, float* images, std::int32_t* labels) const {
  fill_for_epoch(0, indices, images, labels);
}

void JpegTrainingSet::fill_for_epoch(std::uint64_t epoch, std::span<const std::size_t> indices, float* images,
                                     std::int32_t* labels) const {
  // Each epoch its own augmentation stream; epoch 0 keeps the seed itself.
  const std::uint64_t seed = options_.seed ^ (epoch * 0x9e3779b97f4a7c15ULL);
  // Per thread, allocated on a thread's first sample and reused after it.
  thread_local SampleScratch scratch;
  const JpegIndex& index = set_.index();
  const int w = static_cast<int>(index.width), h = static_cast<int>(index.height);
  const std::size_t per_sample = shape().elements();
  StageSeconds unused;
  for (std::size_t k = 0; k < indices.size(); ++k) {
    // With skip_bad, a bad sample's place goes to the next good one (the set taken as a ring).
    std::size_t i = indices[k];
    for (std::size_t tries = 0;; ++tries) {
      const AugmentParams p = options_.training ? augment_params(options_.augment, seed, i, w, h, options_.crop)
                                                : centre_params(options_.augment, w, h, options_.crop);
      try {
        load_jpeg_sample(set_, fd_, i, p, options_.idct, false, scratch, images + k * per_sample, unused);
        if (tries > 0) skipped_.fetch_add(1);  // one bad sample replaced, however many were tried
        break;
      } catch (const BadSample& bad) {
        if (!options_.skip_bad) bad_sample(set_, i, bad.what, true);
        if (tries + 1 >= set_.size()) throw_input(set_.images_path() + ": every sample is bad; remake the data set with `scalelab data make-jpeg`");
        i = (i + 1) % set_.size();
      }
    }
    labels[k] = static_cast<std::int32_t>(index.entries[i].label);
  }
}

DatasetSplits load_jpeg_splits(const DatasetSpec& spec) {
  const std::string dir = spec.name.substr(5);
  if (dir.empty()) throw_parameter(ErrorKind::usage, "dataset", "jpeg: needs a folder: give jpeg:DIR, a set made by scalelab data make-jpeg");
  JpegSetOptions o;
  if (spec.augment == "simple") {
    o.augment = Augment::simple;
  } else if (spec.augment == "complex") {
    o.augment = Augment::complex;
  } else {
    throw_parameter(ErrorKind::usage, "augment", spec.augment + ": give simple or complex");
  }
  if (spec.decode == "accurate") {
    o.idct = JpegIdct::accurate;
  } else if (spec.decode == "fast") {
    o.idct = JpegIdct::fast;
  } else {
    throw_parameter(ErrorKind::usage, "decode", spec.decode + ": give accurate or fast");
  }
  o.crop = spec.crop;
  o.seed = spec.seed;
  if (spec.on_bad_sample != "stop" && spec.on_bad_sample != "skip") {
    throw_parameter(ErrorKind::usage, "on_bad_sample", spec.on_bad_sample + ": give stop or skip");
  }
  o.skip_bad = spec.on_bad_sample == "skip";
  const std::string test_dir = (std::filesystem::path(dir) / "test").string();
  std::error_code ec;
  DatasetSplits s;
  s.train = std::make_unique<JpegTrainingSet>(dir, o, "jpeg:" + dir + " train");
  if (!std::filesystem::is_directory(test_dir, ec)) {
    if (!spec.need_test) return s;
    throw_parameter(ErrorKind::input, "dataset",
                    spec.name + ": no test set in " + test_dir + "; make one with `scalelab data make-jpeg --split test --out " +
                        test_dir + "` (with the same image size and colour), or train without evaluation");
  }
  // The manifest says which split the images came from (make-jpeg's --split): a test set made from
  // training images would measure accuracy on images the model trained on.
  const std::string manifest = (std::filesystem::path(test_dir) / "manifest.json").string();
  if (std::filesystem::is_regular_file(manifest, ec)) {
    std::string source;
    try {
      source = read_json_file(manifest).value("source", std::string());
    } catch (const std::exception&) {
      source.clear();  // the manifest is for people and tools; index.bin is what the loader reads
    }
    if (source.size() >= 6 && source.compare(source.size() - 6, 6, " train") == 0) {
      throw_input(test_dir + ": made from the training split (its manifest.json: source \"" + source +
                  "\"), so test accuracy would be measured on training images; make it with `scalelab data make-jpeg "
                  "--split test --out " + test_dir + "`");
    }
  }
  o.training = false;
  s.test = std::make_unique<JpegTrainingSet>(test_dir, o, "jpeg:" + dir + " test");
  const JpegIndex& a = static_cast<const JpegTrainingSet&>(*s.train).jpegs().index();
  const JpegIndex& b = static_cast<const JpegTrainingSet&>(*s.test).jpegs().index();
  if (a.width != b.width || a.height != b.height || a.channels != b.channels || a.classes != b.classes) {
    throw_input(test_dir + ": its images are " + std::to_string(b.width) + "x" + std::to_string(b.height) + "x" +
                std::to_string(b.channels) + " in " + std::to_string(b.classes) + " classes, the training set's " +
                std::to_string(a.width) + "x" + std::to_string(a.height) + "x" + std::to_string(a.channels) + " in " +
                std::to_string(a.classes) + "; make both with the same image size and colour");
  }
  return s;
}

void register_jpeg_datasets() { register_dataset_loader("jpeg:", load_jpeg_splits); }

}  // namespace scalelab::data
