// IDX files: round trip gzipped and plain, and each corruption named in the error.
#include <gtest/gtest.h>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
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

// One damaged byte (label 255 among 0..9) would otherwise make a 256-class model.
TEST(Idx, ALabelFarBeyondTheOthersIsADamagedFile) {
  const fs::path d = temp_dir("gap");
  write_set(d, 30, 10, true);
  auto labels = make_labels(30);
  labels[17] = 255;
  write_idx_labels((d / "train-labels-idx1-ubyte.gz").string(), labels, true);
  DatasetSpec spec;
  spec.name = d.string();
  expect_input_error([&] { (void)load_dataset(spec); },
                     {"train-labels-idx1-ubyte.gz", "item 17 has label 255", "no training sample has label 10", "damaged"});
  // Classes 0..9 all present: loads, with 10 classes.
  write_idx_labels((d / "train-labels-idx1-ubyte.gz").string(), make_labels(30), true);
  EXPECT_EQ(load_dataset(spec).train->classes(), 10);
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

namespace {

// Images whose pixels are random in [0, 2^bits), so that their deflate stream is long and every
// part of it matters: 8 bits are stored as they are, fewer are Huffman-coded.
IdxImages noisy_images(std::uint32_t n, int bits = 8) {
  IdxImages img{n, 28, 28, {}};
  img.pixels.resize(std::size_t{n} * 28 * 28);
  std::uint32_t x = 12345;
  for (auto& p : img.pixels) {
    x = x * 1664525u + 1013904223u;
    p = static_cast<std::uint8_t>(x >> (32 - bits));
  }
  return img;
}

// Rewrites the 16 bytes of `f` from `pos` with their complement.
void flip_bytes(const fs::path& f, std::uintmax_t pos) {
  std::fstream io(f, std::ios::in | std::ios::out | std::ios::binary);
  io.seekg(static_cast<std::streamoff>(pos));
  char b[16];
  io.read(b, sizeof b);
  for (char& c : b) c = static_cast<char>(~c);
  io.seekp(static_cast<std::streamoff>(pos));
  io.write(b, sizeof b);
}

// Expects reading the images at `f` to fail with an input error naming it and one of `words`.
void expect_images_rejected(const fs::path& f, std::initializer_list<std::string> words, const std::string& what) {
  try {
    (void)read_idx_images(f.string());
    ADD_FAILURE() << what << ": accepted";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_EQ(e.exit_code(), 2) << what << ": " << m;
    EXPECT_NE(m.find(f.string()), std::string::npos) << what << ": " << m;
    bool named = false;
    for (const auto& w : words) named = named || m.find(w) != std::string::npos;
    EXPECT_TRUE(named) << what << ": " << m;
    EXPECT_EQ(m.find('\n'), std::string::npos) << what << ": " << m;
  }
}

}  // namespace

// Bytes damaged anywhere in the deflate stream, including past the point where the pixels have
// all been decompressed (only the trailer's check can tell then), are an input error.
TEST(Idx, CorruptBytesInsideAGzipStreamAreAnInputError) {
  const fs::path d = temp_dir("gzmid");
  // Full noise is stored, 4-bit noise Huffman-coded: a flipped byte of either changes the pixels
  // but not their length, which only the trailer's CRC catches. 2,000 images are more than zlib's
  // buffer, so they are decompressed straight into the pixels.
  for (int bits : {8, 4}) {
    const fs::path good = d / "good.gz";
    write_idx_images(good.string(), noisy_images(2000, bits), true);
    const std::uintmax_t size = fs::file_size(good);
    for (double at : {0.1, 0.3, 0.5, 0.7, 0.9, 0.99}) {
      const fs::path f = d / "bad.gz";
      fs::copy_file(good, f, fs::copy_options::overwrite_existing);
      const auto pos = std::min<std::uintmax_t>(static_cast<std::uintmax_t>(at * static_cast<double>(size)), size - 24);
      flip_bytes(f, pos);
      expect_images_rejected(f, {"corrupt", "truncated"},
                             std::to_string(bits) + "-bit noise, bytes flipped at " + std::to_string(pos));
    }
  }
  fs::remove_all(d);
}

// A gzip file cut inside its compressed data is an input error. (A cut inside the 8-byte trailer,
// once all the data has been decompressed, reads as a clean end of file through zlib's gzread.)
TEST(Idx, ATruncatedGzipFileIsAnInputError) {
  const fs::path d = temp_dir("gzcut");
  const fs::path good = d / "good.gz";
  write_idx_images(good.string(), noisy_images(2000), true);
  const std::uintmax_t size = fs::file_size(good);
  // The last cuts fall inside the 8-byte trailer (CRC-32 and length) after all the data.
  for (std::uintmax_t keep : {std::uintmax_t{40}, size / 4, size / 2, size * 3 / 4, size - 64, size - 6, size - 1}) {
    const fs::path f = d / "cut.gz";
    fs::copy_file(good, f, fs::copy_options::overwrite_existing);
    fs::resize_file(f, keep);
    expect_images_rejected(f, {"truncated"}, "cut to " + std::to_string(keep) + " of " + std::to_string(size) + " bytes");
  }
  fs::remove_all(d);
}

namespace {

// The process's virtual memory size in bytes (/proc/self/statm's first field, in pages).
std::uint64_t virtual_bytes() {
  std::ifstream in("/proc/self/statm");
  std::uint64_t pages = 0;
  in >> pages;
  return pages * static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
}

// Reads `f` (images, or labels when `labels`) in a child process allowed `headroom` bytes more
// address space than it has, and returns what it saw: 0 an input error saying "truncated", 1
// another error or none, 2 out of memory.
int read_with_memory_limit(const fs::path& f, std::uint64_t headroom, bool labels = false) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    const rlimit lim{virtual_bytes() + headroom, virtual_bytes() + headroom};
    ::setrlimit(RLIMIT_AS, &lim);
    int code = 1;
    try {
      if (labels) (void)read_idx_labels(f.string());
      else (void)read_idx_images(f.string());
    } catch (const Error& e) {
      code = std::string(e.what()).find("truncated") != std::string::npos ? 0 : 1;
    } catch (const std::bad_alloc&) {
      code = 2;
    }
    ::_exit(code);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 3;
}

// Writes an IDX image file of `real` images whose header claims `claimed`.
void write_lying_header(const fs::path& f, std::uint32_t real, std::uint32_t claimed, bool gzip) {
  IdxImages img = noisy_images(real);
  img.count = claimed;
  write_idx_images(f.string(), img, gzip);
}

}  // namespace

// A header claiming far more images than the file holds is refused as truncated before memory for
// the claim is taken: the reader runs with 256 MiB of headroom against a claim of 2 GB.
TEST(Idx, AHeaderClaimingMoreThanTheFileHoldsAllocatesNothingForTheClaim) {
  const fs::path d = temp_dir("claim");
  for (bool gzip : {false, true}) {
    const fs::path f = d / (gzip ? "images.gz" : "images");
    write_lying_header(f, 50, 2'700'000, gzip);
    EXPECT_EQ(read_with_memory_limit(f, std::uint64_t{256} << 20), 0) << f << " (2: out of memory)";
  }
  // A label file whose header claims 2^31 labels in a 10-byte file.
  const fs::path labels = d / "labels";
  {
    std::ofstream out(labels, std::ios::binary);
    out.write("\x00\x00\x08\x01\x80\x00\x00\x00\x01\x02", 10);
  }
  EXPECT_EQ(read_with_memory_limit(labels, std::uint64_t{256} << 20, true), 0) << labels << " (2: out of memory)";
  fs::remove_all(d);
}
