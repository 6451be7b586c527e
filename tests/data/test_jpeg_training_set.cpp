// The training set over a JPEG set (data/jpeg_training_set.h): what it fills agrees with the
// pipeline, its augmentation is drawn afresh each epoch and evaluation's is not, bad samples stop
// training naming them or are replaced and counted; the JPEG splits' checks; and the prepared
// ("synthetic data") set that hands out its first samples for every index.
#include "data/jpeg_codec.h"
#include "data/jpeg_training_set.h"
#include "data/prepared.h"
#include "jpeg_test_support.h"

using namespace scalelab;
using namespace scalelab::data;
using namespace scalelab::data::testing;

TEST_F(PipelineTest, TheTrainingSetFillsWhatThePipelineDelivers) {
  for (const Augment a : {Augment::simple, Augment::complex}) {
    const std::vector<Batch> piped = run({.workers = 1, .augment = a, .idct = JpegIdct::fast, .batch = 23, .crop = 40, .seed = 7}, 23);
    ASSERT_EQ(piped.size(), 1u);
    const JpegTrainingSet set(dir_.string(), {.augment = a, .idct = JpegIdct::fast, .crop = 40, .seed = 7}, "t");
    EXPECT_EQ(set.size(), 23u);
    EXPECT_EQ(set.shape(), (ImageShape{3, 40, 40}));
    EXPECT_EQ(set.classes(), 10);
    std::vector<std::size_t> all(23);
    for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
    std::vector<float> images(23 * 3 * 40 * 40);
    std::vector<std::int32_t> labels(23);
    set.fill(all, images.data(), labels.data());
    EXPECT_EQ(images, piped[0].images) << name_of(a);
    EXPECT_EQ(labels, piped[0].labels);
  }
}

TEST_F(PipelineTest, TrainingAugmentationIsDrawnAfreshEachEpochAndEvaluationIsNot) {
  std::vector<std::size_t> all(23);
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
  auto fill = [&](const JpegTrainingSet& set, std::uint64_t epoch) {
    std::vector<float> images(23 * 3 * 40 * 40);
    std::vector<std::int32_t> labels(23);
    set.fill_for_epoch(epoch, all, images.data(), labels.data());
    return std::make_pair(images, labels);
  };
  for (const Augment a : {Augment::simple, Augment::complex}) {
    const JpegTrainingSet train(dir_.string(), {.augment = a, .crop = 40, .seed = 7}, "t");
    std::vector<float> epoch0(23 * 3 * 40 * 40);
    std::vector<std::int32_t> labels0(23);
    train.fill(all, epoch0.data(), labels0.data());
    EXPECT_EQ(fill(train, 0).first, epoch0) << "fill() is epoch 0's augmentation";
    const auto [epoch1, labels1] = fill(train, 1);
    EXPECT_NE(epoch1, epoch0) << name_of(a) << ": epoch 1 took the same crops and flips as epoch 0";
    EXPECT_EQ(labels1, labels0);
    EXPECT_EQ(fill(train, 1).first, epoch1) << "an epoch's augmentation is reproducible";
    const JpegTrainingSet test(dir_.string(), {.augment = a, .crop = 40, .seed = 7, .training = false}, "t");
    EXPECT_EQ(fill(test, 3).first, fill(test, 0).first) << "evaluation has no chance in it";
  }
}

TEST_F(PipelineTest, EvaluationTakesTheCentredCropWithoutChance) {
  const JpegTrainingSet set(dir_.string(), {.crop = 40, .training = false}, "t");
  const JpegDataset jpegs(dir_.string());
  const std::vector<std::uint8_t> all = file_bytes(dir_ / "images.bin");
  const JpegEntry& e = jpegs.index().entries[5];
  const Image img = decode_jpeg(std::span<const std::uint8_t>(all).subspan(e.offset, e.size), 3, JpegIdct::accurate);
  std::vector<float> expected(3 * 40 * 40);
  const AugmentParams p = centre_params(Augment::simple, 48, 48, 40);
  EXPECT_EQ(p.crop_x, 4);
  EXPECT_FALSE(p.flip);
  augment_into(p, img, expected.data());
  std::vector<float> got(3 * 40 * 40);
  std::int32_t label = -1;
  const std::size_t five = 5;
  set.fill(std::span<const std::size_t>(&five, 1), got.data(), &label);
  EXPECT_EQ(got, expected);
  EXPECT_EQ(label, 5);
}

TEST_F(PipelineTest, TheTrainingSetStopsAtABadSampleNamingIt) {
  JpegIndex index = JpegDataset(dir_.string()).index();
  std::vector<std::uint8_t> images = file_bytes(dir_ / "images.bin");
  std::fill_n(images.begin() + static_cast<std::ptrdiff_t>(index.entries[3].offset), index.entries[3].size, 0x41);
  write_bytes(dir_ / "images.bin", images);
  const JpegTrainingSet set(dir_.string(), {.crop = 40}, "t");
  std::vector<float> out(2 * 3 * 40 * 40);
  std::vector<std::int32_t> labels(2);
  const std::vector<std::size_t> idx{2, 3};
  const std::string m = error_of([&] { set.fill(idx, out.data(), labels.data()); });
  EXPECT_NE(m.find((dir_ / "images.bin").string() + " sample 3 ("), std::string::npos) << m;
  EXPECT_NE(m.find("remake the data set with `scalelab data make-jpeg`"), std::string::npos) << m;
  EXPECT_NE(m.find("or skip bad samples"), std::string::npos) << m;
  EXPECT_EQ(set.skipped_samples(), 0u);

  // With skip_bad, sample 4 (the next good one) takes sample 3's place, label and all, and counts.
  const JpegTrainingSet skipping(dir_.string(), {.crop = 40, .training = false, .skip_bad = true}, "t");
  skipping.fill(idx, out.data(), labels.data());
  std::vector<float> four(3 * 40 * 40);
  std::int32_t four_label = -1;
  const std::size_t i4 = 4;
  skipping.fill(std::span<const std::size_t>(&i4, 1), four.data(), &four_label);
  EXPECT_TRUE(std::equal(four.begin(), four.end(), out.begin() + 3 * 40 * 40));
  EXPECT_EQ(labels[1], four_label);
  EXPECT_EQ(skipping.skipped_samples(), 1u);
}

TEST_F(PipelineTest, AdjacentBadSamplesCountOnceEachWhenSkipped) {
  JpegIndex index = JpegDataset(dir_.string()).index();
  std::vector<std::uint8_t> images = file_bytes(dir_ / "images.bin");
  for (const std::size_t bad : {3u, 4u}) {
    std::fill_n(images.begin() + static_cast<std::ptrdiff_t>(index.entries[bad].offset), index.entries[bad].size, 0x41);
  }
  write_bytes(dir_ / "images.bin", images);
  const JpegTrainingSet set(dir_.string(), {.crop = 40, .training = false, .skip_bad = true}, "t");
  std::vector<float> out(3 * 3 * 40 * 40);
  std::vector<std::int32_t> labels(3);
  const std::vector<std::size_t> idx{3, 4, 5};
  set.fill(idx, out.data(), labels.data());
  // Both bad samples take sample 5's place: two replaced, whatever was tried on the way.
  EXPECT_EQ(set.skipped_samples(), 2u);
  EXPECT_EQ(labels[0], labels[2]);
  EXPECT_EQ(labels[1], labels[2]);
  EXPECT_TRUE(std::equal(out.begin(), out.begin() + 3 * 40 * 40, out.begin() + 2 * 3 * 40 * 40));
}

TEST_F(PipelineTest, JpegSplitsNeedTheTestSetBesideThemAndACropThatFits) {
  DatasetSpec spec;
  spec.name = "jpeg:" + dir_.string();
  spec.crop = 40;
  const std::string missing = error_of([&] { (void)load_jpeg_splits(spec); });
  EXPECT_NE(missing.find((dir_ / "test").string()), std::string::npos) << missing;
  EXPECT_NE(missing.find("scalelab data make-jpeg --split test"), std::string::npos) << missing;
  (void)make_jpeg_dataset(small_source(12), {.size = 48, .quality = 90, .colour = true}, (dir_ / "test").string());
  const DatasetSplits s = load_jpeg_splits(spec);
  EXPECT_EQ(s.train->size(), 23u);
  EXPECT_EQ(s.test->size(), 12u);
  EXPECT_EQ(s.test->shape(), (ImageShape{3, 40, 40}));
  DatasetSpec big = spec;
  big.crop = 49;
  EXPECT_NE(error_of([&] { (void)load_jpeg_splits(big); }).find("49: the crop must fit"), std::string::npos);
  DatasetSpec word = spec;
  word.augment = "fancy";
  EXPECT_NE(error_of([&] { (void)load_jpeg_splits(word); }).find("fancy: give simple or complex"), std::string::npos);
}

TEST(PreparedDataset, HandsOutItsFirstSamplesForEveryIndex) {
  const InMemoryDataset source = small_source(23);
  const PreparedDataset prepared(source, 5);
  EXPECT_EQ(prepared.size(), 23u);
  EXPECT_EQ(prepared.shape(), source.shape());
  const std::vector<std::size_t> asked{7, 12, 4};
  const std::vector<std::size_t> same{2, 2, 4};
  std::vector<float> a(3 * 784), b(3 * 784);
  std::vector<std::int32_t> la(3), lb(3);
  prepared.fill(asked, a.data(), la.data());
  source.fill(same, b.data(), lb.data());
  EXPECT_EQ(a, b);
  EXPECT_EQ(la, lb);
}
