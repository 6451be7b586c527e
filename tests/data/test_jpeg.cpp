// JPEG data sets: the codec's round trip and errors, index parsing and its errors, making and
// opening a set, the augmentations' determinism and bounds, and the pipeline: the same batches
// whatever the worker count, and bad samples stopped with the file and index named, or skipped.
// The training set over JPEGs and the prepared ("synthetic") set: test_jpeg_training_set.cpp.
#include <set>

#include "data/jpeg_codec.h"
#include "file_size_limit.h"
#include "jpeg_test_support.h"

using namespace scalelab;
using namespace scalelab::data;
using namespace scalelab::data::testing;

TEST(JpegCodec, RoundTripsGreyAndColourCloseToTheSource) {
  const InMemoryDataset src = small_source(3);
  for (const bool colour : {false, true}) {
    const MakeJpegOptions o{.size = 64, .quality = 95, .colour = colour};
    const std::vector<std::uint8_t> pixels = jpeg_source_pixels(src, 1, o);
    const int c = colour ? 3 : 1;
    const std::vector<std::uint8_t> jpeg = encode_jpeg(pixels, {64, 64, c}, 95);
    const JpegInfo info = read_jpeg_header(jpeg);
    EXPECT_EQ(info.width, 64);
    EXPECT_EQ(info.height, 64);
    EXPECT_EQ(info.channels, c);
    for (const JpegIdct idct : {JpegIdct::accurate, JpegIdct::fast}) {
      const Image img = decode_jpeg(jpeg, c, idct);
      EXPECT_EQ(img.width, 64);
      EXPECT_LT(mean_abs_diff(img.pixels, pixels), colour ? 8.0 : 2.0) << name_of(idct);
    }
    const Image half = decode_jpeg(jpeg, c, JpegIdct::accurate, 2);
    EXPECT_EQ(half.width, 32);
    EXPECT_EQ(half.height, 32);
  }
}

TEST(JpegCodec, ReducedScaleIsTheSmallestThatStillCoversTheOutput) {
  EXPECT_EQ(jpeg_scale_for(224, 224, 112, 112), 2);
  EXPECT_EQ(jpeg_scale_for(224, 224, 113, 112), 1);
  EXPECT_EQ(jpeg_scale_for(224, 224, 28, 28), 8);
  EXPECT_EQ(jpeg_scale_for(224, 100, 56, 50), 2);
  EXPECT_EQ(jpeg_scale_for(224, 224, 224, 224), 1);
}

TEST(JpegCodec, NotAJpegAndTruncatedJpegsAreErrors) {
  const std::vector<std::uint8_t> junk(100, 0x42);
  EXPECT_THROW((void)read_jpeg_header(junk), JpegError);
  EXPECT_THROW((void)decode_jpeg(junk, 1, JpegIdct::accurate), JpegError);
  const InMemoryDataset src = small_source(1);
  std::vector<std::uint8_t> jpeg = encode_jpeg(jpeg_source_pixels(src, 0, {.size = 64}), {64, 64, 1}, 90);
  jpeg.resize(jpeg.size() / 2);
  EXPECT_THROW((void)decode_jpeg(jpeg, 1, JpegIdct::accurate), JpegError);
}

TEST(JpegIndex, RoundTripsAndNamesEachProblem) {
  JpegIndex index{224, 200, 3, 10, {{0, 100, 3}, {100, 50, 9}}};
  const std::vector<std::uint8_t> bytes = serialize_jpeg_index(index);
  EXPECT_EQ(bytes.size(), kJpegIndexHeaderBytes + 2 * kJpegIndexEntryBytes);
  const JpegIndex back = parse_jpeg_index(bytes, "x/index.bin");
  EXPECT_EQ(back.width, 224u);
  EXPECT_EQ(back.height, 200u);
  EXPECT_EQ(back.channels, 3u);
  ASSERT_EQ(back.entries.size(), 2u);
  EXPECT_EQ(back.entries[1].offset, 100u);
  EXPECT_EQ(back.entries[1].size, 50u);
  EXPECT_EQ(back.entries[1].label, 9u);

  const auto parse_error = [](std::vector<std::uint8_t> b) { return error_of([&] { (void)parse_jpeg_index(b, "x/index.bin"); }); };
  auto b = bytes;
  b[0] = 'X';
  EXPECT_NE(parse_error(b).find("x/index.bin: not a JPEG data set index"), std::string::npos);
  b = bytes;
  b[8] = 2;
  EXPECT_NE(parse_error(b).find("format version 2"), std::string::npos);
  b = bytes;
  b.push_back(0);
  EXPECT_NE(parse_error(b).find("trailing bytes"), std::string::npos);
  b = bytes;
  b.resize(b.size() - 1);
  EXPECT_NE(parse_error(b).find("truncated"), std::string::npos);
  EXPECT_NE(parse_error({'S', 'L'}).find("shorter than the 32-byte header"), std::string::npos);
  index.entries[1].label = 10;
  EXPECT_NE(parse_error(serialize_jpeg_index(index)).find("entry 1 has label 10"), std::string::npos);
  index.entries[1] = {100, 0, 1};
  EXPECT_NE(parse_error(serialize_jpeg_index(index)).find("entry 1 is empty"), std::string::npos);
  index.entries[1] = {100, 50, 1};
  index.channels = 2;
  EXPECT_NE(parse_error(serialize_jpeg_index(index)).find("2 channels"), std::string::npos);
  index.channels = 1;
  EXPECT_NE(error_of([&] { check_jpeg_entries(index, 149, "x/images.bin"); }).find("x/images.bin: 149 bytes, but sample 1"),
            std::string::npos);
  EXPECT_NO_THROW(check_jpeg_entries(index, 150, "x/images.bin"));
}

TEST(JpegDataset, MakesASetThatOpensWithItsLabelsAndImages) {
  const fs::path dir = temp_dir("make");
  const InMemoryDataset src = small_source(12);
  const MakeJpegOptions o{.size = 28, .quality = 100, .limit = 10};
  const MakeJpegResult r = make_jpeg_dataset(src, o, dir.string());
  EXPECT_EQ(r.count, 10u);
  EXPECT_EQ(fs::file_size(dir / "images.bin"), r.jpeg_bytes);
  EXPECT_TRUE(fs::exists(dir / "manifest.json"));
  const JpegDataset set(dir.string());
  ASSERT_EQ(set.size(), 10u);
  EXPECT_EQ(set.shape(), (ImageShape{1, 28, 28}));
  const std::vector<std::uint8_t> images = file_bytes(dir / "images.bin");
  for (std::size_t i = 0; i < set.size(); ++i) {
    const JpegEntry& e = set.index().entries[i];
    EXPECT_EQ(e.label, src.labels()[i]);
    const std::span<const std::uint8_t> jpeg(images.data() + e.offset, e.size);
    // At the source's own size the bilinear upsampling is the identity: the JPEG holds the image.
    const Image img = decode_jpeg(jpeg, 1, JpegIdct::accurate);
    const std::vector<std::uint8_t> original(src.pixels().begin() + static_cast<std::ptrdiff_t>(i * 784),
                                             src.pixels().begin() + static_cast<std::ptrdiff_t>((i + 1) * 784));
    EXPECT_EQ(jpeg_source_pixels(src, i, o), original);
    EXPECT_LT(mean_abs_diff(img.pixels, original), 1.5) << "sample " << i;
  }
  fs::remove_all(dir);
}

// Remaking a set that fails half-way (a file-size limit stands in for a full disk) leaves the old
// set whole and opening: nothing new beside an old index, no temporary left.
TEST(JpegDataset, AFailedRemakeLeavesTheOldSetWhole) {
  const fs::path dir = temp_dir("remake");
  (void)make_jpeg_dataset(small_source(4), {.size = 32}, dir.string());
  const std::vector<std::uint8_t> before = file_bytes(dir / "images.bin");
  const std::string m = testing_support::error_under_file_size_limit(
      8192, [&] { (void)make_jpeg_dataset(small_source(12), {.size = 96, .quality = 100}, dir.string()); });
  EXPECT_NE(m.find("write failed"), std::string::npos) << m;
  EXPECT_EQ(file_bytes(dir / "images.bin"), before);
  const JpegDataset set(dir.string());
  EXPECT_EQ(set.size(), 4u);
  EXPECT_EQ(set.shape(), (ImageShape{1, 32, 32}));
  std::size_t files = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir)) ++files;
  EXPECT_EQ(files, 3u);  // images.bin, index.bin, manifest.json
  fs::remove_all(dir);
}

TEST(JpegDataset, MissingOrTruncatedFilesNameTheFile) {
  const fs::path dir = temp_dir("missing");
  EXPECT_NE(error_of([&] { JpegDataset s((dir / "none").string()); }).find("dataset jpeg:" + (dir / "none").string() + ": no such folder"),
            std::string::npos);
  (void)make_jpeg_dataset(small_source(4), {.size = 32}, dir.string());
  auto images = file_bytes(dir / "images.bin");
  images.resize(images.size() - 10);
  write_bytes(dir / "images.bin", images);
  EXPECT_NE(error_of([&] { JpegDataset s(dir.string()); }).find("images.bin: " + std::to_string(images.size()) + " bytes, but sample 3"),
            std::string::npos);
  // Bytes past the last sample: another make's images beside this index.
  images = file_bytes(dir / "images.bin");
  images.resize(images.size() + 10 + 100, 0xff);
  write_bytes(dir / "images.bin", images);
  EXPECT_NE(error_of([&] { JpegDataset s(dir.string()); }).find("but its index ends at byte"), std::string::npos);
  fs::remove(dir / "index.bin");
  EXPECT_NE(error_of([&] { JpegDataset s(dir.string()); }).find("index.bin is missing"), std::string::npos);
  fs::remove_all(dir);
}

TEST(PipelineAugment, ParamsDependOnSeedAndPositionOnlyAndStayInBounds) {
  for (const Augment a : {Augment::simple, Augment::complex}) {
    std::set<std::tuple<int, int, int, int>> crops;
    for (std::uint64_t p = 0; p < 200; ++p) {
      const AugmentParams x = augment_params(a, 7, p, 224, 200, 112);
      const AugmentParams y = augment_params(a, 7, p, 224, 200, 112);
      EXPECT_EQ(x.crop_x, y.crop_x);
      EXPECT_EQ(x.crop_w, y.crop_w);
      EXPECT_EQ(x.flip, y.flip);
      EXPECT_EQ(x.angle, y.angle);
      EXPECT_GE(x.crop_x, 0);
      EXPECT_GE(x.crop_y, 0);
      EXPECT_LE(x.crop_x + x.crop_w, 224);
      EXPECT_LE(x.crop_y + x.crop_h, 200);
      EXPECT_GE(x.crop_w, 1);
      if (a == Augment::simple) {
        EXPECT_EQ(x.crop_w, 112);
        EXPECT_EQ(x.decode_scale, 1);
      } else {
        EXPECT_LE(std::abs(x.angle), 15 * M_PI / 180 + 1e-9);
        EXPECT_GE(x.brightness, 0.6);
        EXPECT_LE(x.brightness, 1.4);
        // Decoded at 1/scale, the crop still spans at least the output (or the scale is 1).
        EXPECT_TRUE(x.decode_scale == 1 || (x.crop_w / x.decode_scale >= 112 && x.crop_h / x.decode_scale >= 112));
      }
      crops.insert({x.crop_x, x.crop_y, x.crop_w, x.crop_h});
    }
    EXPECT_GT(crops.size(), 100u) << name_of(a);  // positions differ
    // Another seed, other crops.
    int same = 0;
    for (std::uint64_t p = 0; p < 50; ++p) {
      same += augment_params(a, 7, p, 224, 200, 112).crop_x == augment_params(a, 8, p, 224, 200, 112).crop_x;
    }
    EXPECT_LT(same, 10) << name_of(a);
  }
}

TEST(PipelineAugment, SimpleIsTheCropFlippedOrNot) {
  Image img{8, 6, 1, {}};
  for (int i = 0; i < 48; ++i) img.pixels.push_back(static_cast<std::uint8_t>(i * 5));
  AugmentParams p;
  p.out = 4;
  p.crop_x = 3;
  p.crop_y = 1;
  p.crop_w = p.crop_h = 4;
  std::vector<float> out(16);
  augment_into(p, img, out.data());
  EXPECT_FLOAT_EQ(out[0], static_cast<float>((1 * 8 + 3) * 5) / 255.0f);
  EXPECT_FLOAT_EQ(out[15], static_cast<float>((4 * 8 + 6) * 5) / 255.0f);
  p.flip = true;
  augment_into(p, img, out.data());
  EXPECT_FLOAT_EQ(out[0], static_cast<float>((1 * 8 + 6) * 5) / 255.0f);
}

TEST_F(PipelineTest, WorkerCountDoesNotChangeTheBatches) {
  for (const Augment a : {Augment::simple, Augment::complex}) {
    PipelineOptions o{.workers = 1, .augment = a, .idct = JpegIdct::fast, .batch = 5, .crop = 40};
    const std::vector<Batch> one = run(o, 30);
    o.workers = 3;
    o.prefetch = 1;
    const std::vector<Batch> three = run(o, 30);
    ASSERT_EQ(one.size(), 6u);
    ASSERT_EQ(three.size(), one.size());
    for (std::size_t b = 0; b < one.size(); ++b) {
      EXPECT_EQ(one[b].index, b);
      EXPECT_EQ(one[b].count, 5);
      EXPECT_EQ(one[b].images.size(), 5u * 3 * 40 * 40);
      EXPECT_EQ(one[b].images, three[b].images) << name_of(a) << " batch " << b;
      EXPECT_EQ(one[b].labels, three[b].labels);
      for (int k = 0; k < 5; ++k) {
        EXPECT_EQ(one[b].samples[static_cast<std::size_t>(k)], (b * 5 + static_cast<std::size_t>(k)) % 23);
        EXPECT_EQ(one[b].labels[static_cast<std::size_t>(k)], static_cast<std::int32_t>(one[b].samples[static_cast<std::size_t>(k)] % 10));
      }
    }
    EXPECT_GT(seconds_.decode, 0);
    EXPECT_GT(seconds_.augment, 0);
    // A different seed gives different batches.
    o.seed = 43;
    EXPECT_NE(run(o, 30)[0].images, one[0].images);
  }
}

TEST_F(PipelineTest, SimpleValuesStayInZeroOneAndTheLastBatchIsPartial) {
  const std::vector<Batch> batches = run({.workers = 2, .batch = 8, .crop = 42, .cold = true}, 20);
  ASSERT_EQ(batches.size(), 3u);
  EXPECT_EQ(batches[2].count, 4);
  for (const Batch& b : batches) {
    for (const float v : b.images) {
      EXPECT_GE(v, 0.0f);
      EXPECT_LE(v, 1.0f);
    }
  }
}

TEST_F(PipelineTest, OptionsOutOfRangeAreUsageErrors) {
  const JpegDataset set(dir_.string());
  EXPECT_NE(error_of([&] { Pipeline p(set, {0}, {.crop = 49}); }).find("crop 49: the crop must fit"), std::string::npos);
  EXPECT_NE(error_of([&] { Pipeline p(set, {0}, {.workers = 0}); }).find("loader_workers 0"), std::string::npos);
  EXPECT_NE(error_of([&] { Pipeline p(set, {0}, {.batch = 0}); }).find("batch_size 0"), std::string::npos);
}

TEST_F(PipelineTest, BadSamplesStopWithTheFileAndIndexOrAreSkippedAndCounted) {
  // Sample 3: not a JPEG; sample 5: truncated; sample 7: a JPEG of another size.
  JpegDataset set(dir_.string());
  JpegIndex index = set.index();
  std::vector<std::uint8_t> images = file_bytes(dir_ / "images.bin");
  std::fill_n(images.begin() + static_cast<std::ptrdiff_t>(index.entries[3].offset), index.entries[3].size, 0x41);
  index.entries[5].size /= 2;
  const std::vector<std::uint8_t> other = encode_jpeg(std::vector<std::uint8_t>(40 * 40 * 3, 128), {40, 40, 3}, 90);
  index.entries[7] = {images.size(), static_cast<std::uint32_t>(other.size()), index.entries[7].label};
  images.insert(images.end(), other.begin(), other.end());
  write_bytes(dir_ / "images.bin", images);
  write_bytes(dir_ / "index.bin", serialize_jpeg_index(index));

  const std::string images_path = (dir_ / "images.bin").string();
  for (const std::size_t bad : {3u, 5u, 7u}) {
    const JpegDataset s(dir_.string());
    try {
      Pipeline pipe(s, {1, bad, 2}, {.workers = 2, .batch = 2, .crop = 40});
      Batch b;
      while (pipe.next(b)) {
      }
      ADD_FAILURE() << "sample " << bad << " went through";
    } catch (const Error& e) {
      EXPECT_EQ(e.exit_code(), 2);
      EXPECT_EQ(e.parameter(), "on_bad_sample");
      const std::string m = e.what();
      EXPECT_NE(m.find(images_path + " sample " + std::to_string(bad) + " ("), std::string::npos) << m;
      EXPECT_EQ(m.find('\n'), std::string::npos);
      if (bad == 7) {
        EXPECT_NE(m.find("a 40x40 image in a set of 48x48 images"), std::string::npos) << m;
      }
    }
  }
  const std::vector<Batch> batches = run({.workers = 2, .batch = 4, .crop = 40, .on_bad = BadSamples::skip}, 23);
  std::size_t delivered = 0;
  std::vector<std::size_t> skipped;
  for (const Batch& b : batches) {
    delivered += static_cast<std::size_t>(b.count);
    EXPECT_EQ(b.images.size(), static_cast<std::size_t>(b.count) * 3 * 40 * 40);
    EXPECT_EQ(b.labels.size(), static_cast<std::size_t>(b.count));
    skipped.insert(skipped.end(), b.skipped.begin(), b.skipped.end());
  }
  EXPECT_EQ(delivered, 20u);
  EXPECT_EQ(skipped, (std::vector<std::size_t>{3, 5, 7}));
  EXPECT_EQ(skipped_, 3u);
}

// The training data set (`train --dataset jpeg:DIR`): the same sample, crop and flip as the
// timed pipeline gives it at the same stream position; the centred crop for evaluation.
