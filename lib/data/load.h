// Opening a dataset by name, as `scalelab train --dataset` does:
//   fashion-mnist  the four IDX files from --data-dir, else $SCALELAB_DATA_DIR, else Debian's
//                  dataset-fashion-mnist folder (/usr/share/datasets/fashion-mnist)
//   synthetic      generated on the fly (data/synthetic.h), 60,000 + 10,000 samples of 1x28x28
//   a folder       any MNIST-format files in it (train-images-idx3-ubyte[.gz], train-labels-
//                  idx1-ubyte[.gz], t10k-images-idx3-ubyte[.gz], t10k-labels-idx1-ubyte[.gz])
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
  std::string name = "fashion-mnist";  // fashion-mnist | synthetic | a folder
  std::string data_dir;                // overrides $SCALELAB_DATA_DIR and the default folder
  std::uint64_t seed = 42;             // synthetic only
  std::size_t synthetic_train = 60000;
  std::size_t synthetic_test = 10000;
};

struct DatasetSplits {
  std::unique_ptr<Dataset> train;
  std::unique_ptr<Dataset> test;
};

[[nodiscard]] DatasetSplits load_dataset(const DatasetSpec& spec);
// The names --dataset accepts besides a folder, for help text.
[[nodiscard]] std::vector<std::string> dataset_names();
// A usage error naming "dataset" unless `name` is one of dataset_names() or an existing folder
// (what load_dataset accepts; the files themselves are checked when loaded).
void check_dataset_name(const std::string& name);

}  // namespace scalelab::data
