// Datasets the trainer reads: images of one shape (channels x height x width) with integer class
// labels. Images stay as uint8 in memory (Fashion-MNIST's 60,000 training images take 47 MB) and
// are converted to float32 in [0, 1] one batch at a time by fill(), into a buffer the caller owns.
//
//   const Dataset& d = ...;                       // from data/load.h
//   d.fill(indices, images /* n*d.shape().elements() */, labels /* n */);
//
// Two kinds: InMemoryDataset (IDX files, data/idx.h) and SyntheticDataset (data/synthetic.h,
// generated on the fly with no I/O: the course's "synthetic data" mode).
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace scalelab::data {

struct ImageShape {
  int channels = 1;
  int height = 0;
  int width = 0;
  [[nodiscard]] std::size_t elements() const {
    return static_cast<std::size_t>(channels) * static_cast<std::size_t>(height) * static_cast<std::size_t>(width);
  }
  bool operator==(const ImageShape&) const = default;
};

class Dataset {
 public:
  virtual ~Dataset() = default;
  [[nodiscard]] virtual std::string name() const = 0;       // "fashion-mnist train", "synthetic test"
  [[nodiscard]] virtual std::size_t size() const = 0;       // number of samples
  [[nodiscard]] virtual ImageShape shape() const = 0;
  [[nodiscard]] virtual int classes() const = 0;
  // Writes samples `indices` (each < size()) as float32 pixels in [0, 1], sample after sample,
  // into `images` (indices.size() * shape().elements() floats) and their labels into `labels`.
  // Thread-safe (const); allocates nothing.
  virtual void fill(std::span<const std::size_t> indices, float* images, std::int32_t* labels) const = 0;
  // The same for a given epoch: a set that augments at random (a JPEG set's crops and flips) draws
  // afresh each epoch, as a function of its seed, the epoch and the sample; the others ignore it.
  virtual void fill_for_epoch(std::uint64_t epoch, std::span<const std::size_t> indices, float* images,
                              std::int32_t* labels) const {
    (void)epoch;
    fill(indices, images, labels);
  }
  // Bad samples skipped so far (a JPEG set told to skip them); 0 for sets that have none.
  [[nodiscard]] virtual std::size_t skipped_samples() const { return 0; }
};

// Images and labels held in memory as bytes, as read from IDX files.
class InMemoryDataset final : public Dataset {
 public:
  InMemoryDataset(std::string name, ImageShape shape, int classes, std::vector<std::uint8_t> pixels,
                  std::vector<std::uint8_t> labels);
  [[nodiscard]] std::string name() const override { return name_; }
  [[nodiscard]] std::size_t size() const override { return labels_.size(); }
  [[nodiscard]] ImageShape shape() const override { return shape_; }
  [[nodiscard]] int classes() const override { return classes_; }
  void fill(std::span<const std::size_t> indices, float* images, std::int32_t* labels) const override;
  [[nodiscard]] const std::vector<std::uint8_t>& pixels() const { return pixels_; }
  [[nodiscard]] const std::vector<std::uint8_t>& labels() const { return labels_; }

 private:
  std::string name_;
  ImageShape shape_;
  int classes_;
  std::vector<std::uint8_t> pixels_;
  std::vector<std::uint8_t> labels_;
};

}  // namespace scalelab::data
