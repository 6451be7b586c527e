// Opening a dataset by name, as `scalelab train --dataset` does:
//   fashion-mnist  the four IDX files from --data-dir, else $SCALELAB_DATA_DIR, else Debian's
//                  dataset-fashion-mnist folder (/usr/share/datasets/fashion-mnist)
//   synthetic      generated on the fly (data/synthetic.h), 60,000 + 10,000 samples of 1x28x28
//   a folder       any MNIST-format files in it (train-images-idx3-ubyte[.gz], train-labels-
//                  idx1-ubyte[.gz], t10k-images-idx3-ubyte[.gz], t10k-labels-idx1-ubyte[.gz])
//   jpeg:DIR       a packed JPEG data set and its test set in DIR/test, decoded as it is read,
//                  where the program registered it (register_dataset_loader below)
// A missing dataset names the package or the folder parameter (data_dir, dataset); a corrupt one
// names the file and the problem.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "data/dataset.h"

namespace scalelab::data {

inline constexpr const char* kDefaultFashionMnistDir = "/usr/share/datasets/fashion-mnist";

struct DatasetSpec {
  std::string name = "fashion-mnist";  // fashion-mnist | synthetic | a folder | jpeg:DIR (registered below)
  std::string data_dir;                // overrides $SCALELAB_DATA_DIR and the default folder
  std::uint64_t seed = 42;             // synthetic data; the JPEG sets' augmentation
  std::size_t synthetic_train = 60000;
  std::size_t synthetic_test = 10000;
  // JPEG data sets only (data/jpeg_training_set.h): the training augmentation ("simple",
  // "complex"), libjpeg-turbo's IDCT ("accurate", "fast"), the crop (0: 7/8 of the images).
  std::string augment = "simple";
  std::string decode = "accurate";
  int crop = 0;
  // A training sample that cannot be used: "stop" (one line naming it, exit 2) or "skip" (the next
  // good sample of the set takes its place, and it is counted: Dataset::skipped_samples()).
  std::string on_bad_sample = "stop";
  // Whether the test split is needed (evaluation). A JPEG set without its DIR/test is an error
  // only when it is; else DatasetSplits::test stays empty.
  bool need_test = true;
};

struct DatasetSplits {
  std::unique_ptr<Dataset> train;
  std::unique_ptr<Dataset> test;  // null only when DatasetSpec::need_test was false and there is none
};

[[nodiscard]] DatasetSplits load_dataset(const DatasetSpec& spec);

// Data sets of libraries above this one: names starting with `prefix` ("jpeg:") are opened by
// `loader`. The JPEG sets (scalelab_data_jpeg, which needs libjpeg-turbo) register themselves this
// way in the scalelab program (data::register_jpeg_datasets), so that this library and the public
// API stay free of it. Register before loading; not thread-safe.
using DatasetLoader = DatasetSplits (*)(const DatasetSpec&);
void register_dataset_loader(const std::string& prefix, DatasetLoader loader);
// Whether `name` is one a registered loader takes.
[[nodiscard]] bool has_registered_loader(const std::string& name);
// The names --dataset accepts besides a folder, for help text.
[[nodiscard]] std::vector<std::string> dataset_names();
// A usage error naming "dataset" unless `name` is one of dataset_names() or an existing folder
// (what load_dataset accepts; the files themselves are checked when loaded).
void check_dataset_name(const std::string& name);

}  // namespace scalelab::data
