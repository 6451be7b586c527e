// What the JPEG tests share: a temporary folder, a small source set to make JPEG sets from, file
// helpers, the message of an error, and the fixture that makes a 23-sample colour set and runs a
// pipeline over it (tests/data/test_jpeg.cpp, tests/data/test_jpeg_training_set.cpp).
#pragma once
#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <cstdlib>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "core/error.h"
#include "data/jpeg_dataset.h"
#include "data/pipeline.h"

namespace scalelab::data::testing {

namespace fs = std::filesystem;

inline fs::path temp_dir(const std::string& name) {
  fs::path d = fs::temp_directory_path() / ("scalelab_test_jpeg_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

// n greyscale 28x28 images: smooth blobs whose position depends on the index; labels i % 10.
inline InMemoryDataset small_source(std::size_t n) {
  std::vector<std::uint8_t> pixels(n * 28 * 28);
  std::vector<std::uint8_t> labels(n);
  for (std::size_t i = 0; i < n; ++i) {
    labels[i] = static_cast<std::uint8_t>(i % 10);
    for (int y = 0; y < 28; ++y) {
      for (int x = 0; x < 28; ++x) {
        const double dx = x - 8.0 - static_cast<double>(i % 12);
        const double dy = y - 14.0;
        pixels[i * 784 + static_cast<std::size_t>(y * 28 + x)] =
            static_cast<std::uint8_t>(std::lround(230 * std::exp(-(dx * dx + dy * dy) / 40.0)));
      }
    }
  }
  return InMemoryDataset("test source", {1, 28, 28}, 10, std::move(pixels), std::move(labels));
}

inline double mean_abs_diff(std::span<const std::uint8_t> a, std::span<const std::uint8_t> b) {
  EXPECT_EQ(a.size(), b.size());
  double s = 0;
  for (std::size_t i = 0; i < a.size(); ++i) s += std::abs(static_cast<int>(a[i]) - static_cast<int>(b[i]));
  return s / static_cast<double>(a.size());
}

inline std::vector<std::uint8_t> file_bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}
inline void write_bytes(const fs::path& p, const std::vector<std::uint8_t>& b) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
}

inline std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

class PipelineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = temp_dir("pipeline_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    (void)make_jpeg_dataset(small_source(23), {.size = 48, .quality = 90, .colour = true}, dir_.string());
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::vector<Batch> run(const PipelineOptions& o, std::size_t images) {
    const JpegDataset set(dir_.string());
    std::vector<std::size_t> stream(images);
    for (std::size_t p = 0; p < images; ++p) stream[p] = p % set.size();
    Pipeline pipe(set, stream, o);
    std::vector<Batch> out;
    Batch b;
    while (pipe.next(b)) out.push_back(b);
    seconds_ = pipe.stage_seconds();
    skipped_ = pipe.skipped();
    return out;
  }
  fs::path dir_;
  StageSeconds seconds_;
  std::size_t skipped_ = 0;
};


}  // namespace scalelab::data::testing
