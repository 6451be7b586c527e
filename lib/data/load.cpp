// load_dataset (data/load.h): resolves the folder, finds each IDX file gzipped or not, and checks
// that images, labels, train and test agree with one another.
#include "data/load.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "core/error.h"
#include "data/idx.h"
#include "data/synthetic.h"

namespace scalelab::data {
namespace fs = std::filesystem;
namespace {

// The parameter that named the folder `dir` holding `dataset`: the dataset itself when it was
// given as a folder, else DatasetSpec::data_dir (given, from SCALELAB_DATA_DIR, or the default).
std::string folder_parameter(const fs::path& dir, const std::string& dataset) {
  return dir.string() == dataset ? "dataset" : "data_dir";
}

// The file for `stem` in `dir`: stem, stem.gz, or MNIST's dotted variant ("train-images.idx3-ubyte").
std::string find_file(const fs::path& dir, const std::string& stem, const std::string& dataset, bool default_dir) {
  std::string dotted = stem;
  const auto dash = dotted.find("-idx");
  if (dash != std::string::npos) dotted[dash] = '.';
  for (const std::string& name : {stem, stem + ".gz", dotted, dotted + ".gz"}) {
    std::error_code ec;
    if (fs::is_regular_file(dir / name, ec)) return (dir / name).string();
  }
  std::error_code ec;
  // A packed JPEG set given without its prefix reads as a folder of IDX files.
  const bool jpeg_set = fs::is_regular_file(dir / "index.bin", ec) && fs::is_regular_file(dir / "images.bin", ec);
  const std::string hint = default_dir ? "install it with 'apt-get install dataset-fashion-mnist' or point the data folder "
                                         "(or SCALELAB_DATA_DIR) at a folder holding the four IDX files"
                           : jpeg_set ? "it holds a JPEG data set: name it jpeg:" + dir.string()
                                      : "give a folder holding the four IDX files, or use the synthetic dataset";
  throw_parameter(ErrorKind::input, folder_parameter(dir, dataset),
                  dir.string() + ": no " + stem + "[.gz] for " + dataset + "; " + hint);
}

// One split's images and labels, checked against each other.
struct RawSplit {
  IdxImages images;
  std::vector<std::uint8_t> labels;
  std::string images_path;
  std::string labels_path;
};

RawSplit load_split(const fs::path& dir, const std::string& prefix, const std::string& dataset, bool default_dir) {
  RawSplit raw;
  raw.images_path = find_file(dir, prefix + "-images-idx3-ubyte", dataset, default_dir);
  raw.labels_path = find_file(dir, prefix + "-labels-idx1-ubyte", dataset, default_dir);
  const std::string& labels_path = raw.labels_path;
  raw.images = read_idx_images(raw.images_path);
  raw.labels = read_idx_labels(labels_path);
  if (raw.images.count != raw.labels.size()) {
    throw_input(raw.images_path + ": holds " + std::to_string(raw.images.count) + " images but " + labels_path +
                " holds " + std::to_string(raw.labels.size()) + " labels; the files do not belong together");
  }
  if (raw.images.count == 0) throw_input(raw.images_path + ": holds no images; give a data set with samples in it");
  return raw;
}

DatasetSplits load_folder(const fs::path& dir, const std::string& dataset, bool default_dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    if (default_dir) {
      throw_parameter(ErrorKind::input, "data_dir",
                      dir.string() + ": folder not found for " + dataset + "; install it with 'apt-get install "
                      "dataset-fashion-mnist' or point the data folder (or SCALELAB_DATA_DIR) at a folder holding the "
                      "IDX files");
    }
    throw_parameter(ErrorKind::input, folder_parameter(dir, dataset),
                    dir.string() + ": folder not found for " + dataset + "; check the path");
  }
  RawSplit train = load_split(dir, "train", dataset, default_dir);
  RawSplit test = load_split(dir, "t10k", dataset, default_dir);
  if (train.images.rows != test.images.rows || train.images.cols != test.images.cols) {
    throw_input(test.images_path + ": test images are " + std::to_string(test.images.rows) + "x" +
                std::to_string(test.images.cols) + " but the training images are " + std::to_string(train.images.rows) +
                "x" + std::to_string(train.images.cols) + "; the files do not belong together");
  }
  const int classes = *std::max_element(train.labels.begin(), train.labels.end()) + 1;
  const int test_max = *std::max_element(test.labels.begin(), test.labels.end());
  if (classes < 2) throw_input(train.images_path + ": the training labels hold a single class");
  // The classes are 0..max: a class below the largest label with no training sample at all is a
  // damaged label (one byte of 255 among 0..9 would make a 256-class model).
  std::vector<std::size_t> per_class(static_cast<std::size_t>(classes), 0);
  for (const std::uint8_t l : train.labels) ++per_class[l];
  if (const auto gap = std::find(per_class.begin(), per_class.end(), std::size_t{0}); gap != per_class.end()) {
    const auto first_empty = static_cast<int>(gap - per_class.begin());
    const auto item = std::find_if(train.labels.begin(), train.labels.end(), [&](std::uint8_t l) { return l > first_empty; });
    throw_input(train.labels_path + ": item " + std::to_string(item - train.labels.begin()) + " has label " +
                std::to_string(*item) + ", but no training sample has label " + std::to_string(first_empty) +
                ": the classes must run 0.." + std::to_string(classes - 1) + " without gaps; the file looks damaged, "
                "restore it (apt-get install --reinstall dataset-fashion-mnist for Fashion-MNIST)");
  }
  if (test_max >= classes) {
    throw_input(test.labels_path + ": test label " + std::to_string(test_max) +
                " is beyond the training labels' classes 0.." + std::to_string(classes - 1) +
                "; restore the file (apt-get install --reinstall dataset-fashion-mnist for Fashion-MNIST)");
  }
  const ImageShape shape{1, static_cast<int>(train.images.rows), static_cast<int>(train.images.cols)};
  DatasetSplits s;
  s.train = std::make_unique<InMemoryDataset>(dataset + " train", shape, classes, std::move(train.images.pixels),
                                              std::move(train.labels));
  s.test = std::make_unique<InMemoryDataset>(dataset + " test", shape, classes, std::move(test.images.pixels),
                                             std::move(test.labels));
  return s;
}

}  // namespace

namespace {

std::vector<std::pair<std::string, DatasetLoader>>& registered_loaders() {
  static std::vector<std::pair<std::string, DatasetLoader>> loaders;
  return loaders;
}

DatasetLoader loader_for(const std::string& name) {
  for (const auto& [prefix, loader] : registered_loaders()) {
    if (name.rfind(prefix, 0) == 0) return loader;
  }
  return nullptr;
}

}  // namespace

void register_dataset_loader(const std::string& prefix, DatasetLoader loader) {
  if (loader_for(prefix) == nullptr) registered_loaders().emplace_back(prefix, loader);
}

bool has_registered_loader(const std::string& name) { return loader_for(name) != nullptr; }

std::vector<std::string> dataset_names() { return {"fashion-mnist", "synthetic"}; }

DatasetSplits load_dataset(const DatasetSpec& spec) {
  if (const DatasetLoader loader = loader_for(spec.name)) return loader(spec);
  if (spec.name == "synthetic") {
    const ImageShape shape{1, 28, 28};
    DatasetSplits s;
    s.train = std::make_unique<SyntheticDataset>(spec.synthetic_train, shape, 10, spec.seed, 0);
    s.test = std::make_unique<SyntheticDataset>(spec.synthetic_test, shape, 10, spec.seed, 1);
    return s;
  }
  if (spec.name == "fashion-mnist") {
    if (!spec.data_dir.empty()) return load_folder(spec.data_dir, "fashion-mnist", false);
    if (const char* env = std::getenv("SCALELAB_DATA_DIR"); env != nullptr && *env != '\0') {
      return load_folder(env, "fashion-mnist (SCALELAB_DATA_DIR)", false);
    }
    return load_folder(kDefaultFashionMnistDir, "fashion-mnist", true);
  }
  check_dataset_name(spec.name);
  return load_folder(spec.name, spec.name, false);
}

void check_dataset_name(const std::string& name) {
  for (const auto& n : dataset_names()) {
    if (n == name) return;
  }
  std::error_code ec;
  if (fs::is_directory(name, ec) || has_registered_loader(name)) return;
  throw_parameter(ErrorKind::usage, "dataset",
                  name + ": unknown dataset; use fashion-mnist, synthetic, or a folder holding MNIST-format IDX files" +
                      (has_registered_loader("jpeg:") ? std::string(" (or jpeg:DIR, a set from scalelab data make-jpeg)") : ""));
}

}  // namespace scalelab::data
