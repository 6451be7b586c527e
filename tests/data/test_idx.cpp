// IDX files: round trip gzipped and plain, and each corruption named in the error.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "data/idx.h"
#include "data/load.h"
#include "data/synthetic.h"

namespace fs = std::filesystem;
using namespace scalelab;
using namespace scalelab::data;

namespace {

fs::path temp_dir(const std::string& name) {
  fs::path d = fs::temp_directory_path() / ("scalelab_test_data_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

IdxImages make_images(std::uint32_t n, std::uint32_t rows, std::uint32_t cols) {
  IdxImages img{n, rows, cols, {}};
  img.pixels.resize(std::size_t{n} * rows * cols);
  for (std::size_t i = 0; i < img.pixels.size(); ++i) img.pixels[i] = static_cast<std::uint8_t>(i * 7 % 256);
  return img;
}

std::vector<std::uint8_t> make_labels(std::uint32_t n) {
  std::vector<std::uint8_t> l(n);
  for (std::uint32_t i = 0; i < n; ++i) l[i] = static_cast<std::uint8_t>(i % 10);
  return l;
}

void write_set(const fs::path& dir, std::uint32_t train, std::uint32_t test, bool gzip) {
  const std::string ext = gzip ? ".gz" : "";
  write_idx_images((dir / ("train-images-idx3-ubyte" + ext)).string(), make_images(train, 28, 28), gzip);
  write_idx_labels((dir / ("train-labels-idx1-ubyte" + ext)).string(), make_labels(train), gzip);
  write_idx_images((dir / ("t10k-images-idx3-ubyte" + ext)).string(), make_images(test, 28, 28), gzip);
  write_idx_labels((dir / ("t10k-labels-idx1-ubyte" + ext)).string(), make_labels(test), gzip);
}

// Runs `f`, expects an input error whose message contains each of `parts`.
template <typename F>
void expect_input_error(F f, std::initializer_list<std::string> parts) {
  try {
    f();
    FAIL() << "no error thrown";
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), 2) << e.what();
    for (const auto& p : parts) EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what() << " lacks " << p;
  }
}

}  // namespace

TEST(Idx, RoundTripsGzippedAndPlain) {
  for (bool gzip : {false, true}) {
    const fs::path d = temp_dir(gzip ? "gz" : "plain");
    write_set(d, 30, 12, gzip);
    DatasetSpec spec;
    spec.name = d.string();
    DatasetSplits s = load_dataset(spec);
    ASSERT_EQ(s.train->size(), 30u);
    ASSERT_EQ(s.test->size(), 12u);
    EXPECT_EQ(s.train->classes(), 10);
    EXPECT_EQ(s.train->shape(), (ImageShape{1, 28, 28}));
    // Sample 3 converts byte b to b / 255 and keeps its label.
    std::vector<float> img(784);
    std::int32_t label = -1;
    const std::size_t idx = 3;
    s.train->fill({&idx, 1}, img.data(), &label);
    EXPECT_EQ(label, 3);
    const IdxImages ref = make_images(30, 28, 28);
    for (std::size_t k = 0; k < 784; ++k) EXPECT_FLOAT_EQ(img[k], ref.pixels[3 * 784 + k] / 255.0f);
    fs::remove_all(d);
  }
}

TEST(Idx, BadMagicNamesTheFile) {
  const fs::path d = temp_dir("magic");
  write_set(d, 10, 10, false);
  const fs::path f = d / "train-images-idx3-ubyte";
  { std::fstream out(f, std::ios::in | std::ios::out | std::ios::binary); out.put('\x7f'); }
  DatasetSpec spec;
  spec.name = d.string();
  expect_input_error([&] { (void)load_dataset(spec); }, {f.string(), "bad magic"});
  fs::remove_all(d);
}

TEST(Idx, TruncatedFileNamesTheFile) {
  const fs::path d = temp_dir("trunc");
  write_set(d, 10, 10, false);
  const fs::path f = d / "t10k-images-idx3-ubyte";
  fs::resize_file(f, 16 + 784 * 5);
  DatasetSpec spec;
  spec.name = d.string();
  expect_input_error([&] { (void)load_dataset(spec); }, {f.string(), "truncated"});
  fs::remove_all(d);
}

// A gzip file whose data decompresses in full but whose trailer (CRC-32 of the data, then its
// length) does not match: zlib reports it only when the reader asks past the data's end.
TEST(Idx, ACorruptGzipChecksumIsAnInputError) {
  const fs::path d = temp_dir("crc");
  const fs::path f = d / "labels.gz";
  write_idx_labels(f.string(), make_labels(100), true);
  {
    std::fstream io(f, std::ios::in | std::ios::out | std::ios::binary);
    io.seekg(-8, std::ios::end);  // the trailer's CRC-32
    char crc[4];
    io.read(crc, 4);
    for (char& c : crc) c = static_cast<char>(~c);
    io.seekp(-8, std::ios::end);
    io.write(crc, 4);
  }
  expect_input_error([&] { (void)read_idx_labels(f.string()); }, {f.string(), "corrupt"});
  fs::remove_all(d);
}

TEST(Idx, ImageAndLabelCountsMustAgree) {
  const fs::path d = temp_dir("count");
  write_set(d, 10, 10, true);
  write_idx_labels((d / "train-labels-idx1-ubyte.gz").string(), make_labels(9), true);
  DatasetSpec spec;
  spec.name = d.string();
  expect_input_error([&] { (void)load_dataset(spec); }, {"10 images", "9 labels"});
  fs::remove_all(d);
}

TEST(Idx, TrainAndTestDimensionsMustAgree) {
  const fs::path d = temp_dir("dims");
  write_set(d, 10, 10, false);
  write_idx_images((d / "t10k-images-idx3-ubyte").string(), make_images(10, 32, 32), false);
  DatasetSpec spec;
  spec.name = d.string();
  expect_input_error([&] { (void)load_dataset(spec); }, {"32x32", "28x28"});
  fs::remove_all(d);
}

TEST(Idx, MissingDefaultDatasetNamesThePackage) {
  DatasetSpec spec;
  spec.data_dir = "/nonexistent/scalelab";
  expect_input_error([&] { (void)load_dataset(spec); }, {"/nonexistent/scalelab", "data_dir"});
  const fs::path d = temp_dir("missing");
  spec.data_dir = d.string();
  expect_input_error([&] { (void)load_dataset(spec); }, {"train-images-idx3-ubyte"});
  fs::remove_all(d);
}

TEST(Idx, UnknownDatasetIsAUsageError) {
  DatasetSpec spec;
  spec.name = "cifar-1000";
  expect_input_error([&] { (void)load_dataset(spec); }, {"cifar-1000", "synthetic"});
}

TEST(Synthetic, SameIndexSameSampleAndLearnableLabels) {
  SyntheticDataset a(1000, {1, 28, 28}, 10, 7, 0), b(1000, {1, 28, 28}, 10, 7, 0);
  std::vector<float> x(784), y(784);
  std::int32_t la = 0, lb = 0;
  const std::size_t idx = 123;
  a.fill({&idx, 1}, x.data(), &la);
  b.fill({&idx, 1}, y.data(), &lb);
  EXPECT_EQ(x, y);
  EXPECT_EQ(la, lb);
  // Every class occurs, about equally often; every pixel lies in [0, 1).
  std::vector<int> counts(10);
  for (std::size_t i = 0; i < 1000; ++i) counts[static_cast<std::size_t>(a.label_of(i))]++;
  for (int c : counts) EXPECT_GT(c, 50);
  for (float v : x) {
    EXPECT_GE(v, 0.0f);
    EXPECT_LT(v, 1.0f);
  }
}
