// StepPlan (nn/step_plan.h): reverse declaration order, one contiguous range per bucket,
// the byte cap (a tensor over it alone, cap 0 = one bucket per tensor), checked by hand on small
// layouts and by the properties that define greedy packing on random ones.
#include <gtest/gtest.h>

#include <memory>
#include <random>
#include <string>
#include <vector>

#include "core/error.h"
#include "nn/parameter.h"
#include "nn/step_plan.h"

using namespace scalelab;

namespace {

nn::AveragingOptions with_cap(std::size_t bytes) { return {.bucket_cap_bytes = bytes}; }

// A finalized parameter set with one 1-D tensor per entry of `sizes` (floats), all weights.
std::unique_ptr<nn::ParameterSet> layout(const std::vector<std::size_t>& sizes) {
  auto set = std::make_unique<nn::ParameterSet>();
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    std::string name = "p";
    name += std::to_string(i);
    set->add(std::move(name), nn::Shape{sizes[i]}, nn::ParamKind::weight);
  }
  set->finalize();
  return set;
}

std::size_t tensor_bytes(const nn::ParameterSet& set, const nn::Bucket& b) {
  std::size_t n = 0;
  for (std::size_t p = b.first_param; p <= b.last_param; ++p) n += set.info(p).size * sizeof(float);
  return n;
}

// Every property a greedy reverse-order packing with cap `cap` must have.
void check_plan(const nn::ParameterSet& set, std::size_t cap) {
  const nn::StepPlan plan(set.params(), with_cap(cap));
  ASSERT_EQ(plan.options().bucket_cap_bytes, cap);
  if (set.count() == 0) {
    EXPECT_EQ(plan.size(), 0u);
    return;
  }
  // Bucket 0 ends with the last parameter; each next bucket ends just before the previous starts.
  std::size_t expected_last = set.count() - 1;
  std::size_t largest = 0;
  for (std::size_t k = 0; k < plan.size(); ++k) {
    const nn::Bucket& b = plan.buckets()[k];
    ASSERT_EQ(b.last_param, expected_last) << "bucket " << k;
    ASSERT_LE(b.first_param, b.last_param);
    // One contiguous range from the first tensor's start to the last tensor's end.
    EXPECT_EQ(b.offset, set.info(b.first_param).offset);
    EXPECT_EQ(b.offset + b.count, set.info(b.last_param).offset + set.info(b.last_param).size);
    for (std::size_t p = b.first_param; p <= b.last_param; ++p) EXPECT_EQ(plan.bucket_of(p), k);
    // Within the cap unless it is a single tensor; and closed only because the next one did not fit.
    if (b.params() > 1) {
      EXPECT_LE(tensor_bytes(set, b), cap) << "bucket " << k;
    }
    if (b.first_param > 0) {
      const std::size_t next = set.info(b.first_param - 1).size * sizeof(float);
      EXPECT_TRUE(cap == 0 || tensor_bytes(set, b) + next > cap) << "bucket " << k << " could have taken one more";
    }
    largest = std::max(largest, b.count);
    expected_last = b.first_param - 1;
  }
  EXPECT_EQ(plan.buckets().back().first_param, 0u);
  EXPECT_EQ(plan.largest_count(), largest);
}

TEST(StepPlan, PacksInReverseDeclarationOrder) {
  // 4 tensors of 100, 200, 300, 400 floats = 400, 800, 1200, 1600 bytes; cap 2000 bytes:
  // reverse order 1600 | 1200+800 (2000) | 400.
  auto set = layout({100, 200, 300, 400});
  const nn::StepPlan plan(set->params(), with_cap(2000));
  ASSERT_EQ(plan.size(), 3u);
  EXPECT_EQ(plan.buckets()[0].first_param, 3u);
  EXPECT_EQ(plan.buckets()[0].last_param, 3u);
  EXPECT_EQ(plan.buckets()[1].first_param, 1u);
  EXPECT_EQ(plan.buckets()[1].last_param, 2u);
  EXPECT_EQ(plan.buckets()[2].first_param, 0u);
  EXPECT_EQ(plan.buckets()[2].last_param, 0u);
  // Bucket 1 spans p1's start to p2's end, the alignment padding between them included.
  EXPECT_EQ(plan.buckets()[1].offset, set->info(1).offset);
  EXPECT_EQ(plan.buckets()[1].count, set->info(2).offset + 300 - set->info(1).offset);
  EXPECT_EQ(plan.bucket_of(0), 2u);
  EXPECT_EQ(plan.bucket_of(3), 0u);
  check_plan(*set, 2000);
}

TEST(StepPlan, LargeCapGivesOneBucketOverTheWholeBuffer) {
  auto set = layout({10, 33, 7, 1000});
  const nn::StepPlan plan(set->params(), with_cap(nn::kDefaultBucketCapBytes));
  ASSERT_EQ(plan.size(), 1u);
  EXPECT_EQ(plan.buckets()[0].offset, 0u);
  EXPECT_EQ(plan.buckets()[0].count, set->size());
  EXPECT_EQ(plan.buckets()[0].params(), 4u);
}

TEST(StepPlan, TensorOverTheCapGetsABucketOfItsOwn) {
  // 64 KiB cap; the middle tensor is 1 MiB: it sits alone, its neighbours are not merged across it.
  auto set = layout({1000, 1000, 262144, 1000, 1000});
  const nn::StepPlan plan(set->params(), with_cap(64 << 10));
  ASSERT_EQ(plan.size(), 3u);
  EXPECT_EQ(plan.buckets()[1].first_param, 2u);
  EXPECT_EQ(plan.buckets()[1].last_param, 2u);
  EXPECT_EQ(plan.buckets()[1].count, 262144u);
  EXPECT_EQ(plan.largest_count(), 262144u);
  check_plan(*set, 64 << 10);
}

TEST(StepPlan, ExactFitStaysInOneBucket) {
  auto set = layout({256, 256});  // 1 KiB each; 16-float aligned, no padding
  EXPECT_EQ(nn::StepPlan(set->params(), with_cap(2048)).size(), 1u);
  EXPECT_EQ(nn::StepPlan(set->params(), with_cap(2047)).size(), 2u);
}

TEST(StepPlan, CapZeroGivesOneBucketPerTensor) {
  auto set = layout({5, 1, 17, 64, 3});
  const nn::StepPlan plan(set->params(), with_cap(0));
  ASSERT_EQ(plan.size(), set->count());
  for (std::size_t k = 0; k < plan.size(); ++k) {
    const std::size_t p = set->count() - 1 - k;
    EXPECT_EQ(plan.buckets()[k].first_param, p);
    EXPECT_EQ(plan.buckets()[k].count, set->info(p).size);
  }
  EXPECT_NE(plan.describe().find("one per tensor"), std::string::npos) << plan.describe();
}

TEST(StepPlan, EmptyParameterListGivesNoBuckets) {
  auto set = layout({});
  check_plan(*set, 1024);
  EXPECT_EQ(nn::StepPlan(set->params(), with_cap(1024)).largest_count(), 0u);
}

TEST(StepPlan, RandomLayoutsHaveTheGreedyProperties) {
  std::mt19937 rng(20261122);
  std::uniform_int_distribution<std::size_t> count(1, 40), size(1, 5000), cap_kib(0, 40);
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<std::size_t> sizes(count(rng));
    for (auto& s : sizes) s = size(rng);
    auto set = layout(sizes);
    const std::size_t cap = cap_kib(rng) * 1024 + (trial % 3) * 4;
    SCOPED_TRACE("trial " + std::to_string(trial) + " cap " + std::to_string(cap));
    check_plan(*set, cap);
  }
}

TEST(StepPlan, RejectsOverlappingOffsets) {
  std::vector<nn::ParamInfo> params = {{"a", nn::Shape{10}, 0, 10, nn::ParamKind::weight},
                                       {"b", nn::Shape{10}, 5, 10, nn::ParamKind::bias}};
  EXPECT_THROW(nn::StepPlan(params, with_cap(1024)), Error);
}

TEST(StepPlan, DescribesCountAndSizes) {
  auto set = layout({262144, 262144, 262144});  // 1 MiB each
  const std::string d = nn::StepPlan(set->params(), with_cap(2 << 20)).describe();
  EXPECT_EQ(d, "2 buckets of <= 2 MiB (2.0 MiB, 1.0 MiB)");
  auto small = layout({100, 3000});  // 400 B, then 16-float alignment: 112 + 3000 floats in one bucket
  EXPECT_EQ(nn::StepPlan(small->params(), with_cap(1 << 20)).describe(), "1 bucket of <= 1 MiB (12.2 KiB)");
  // A cap below a tensor's size: that tensor is a bucket of its own, and small ones are in bytes.
  auto mixed = layout({10, 1000});
  EXPECT_EQ(nn::StepPlan(mixed->params(), with_cap(1)).describe(),
            "2 buckets of <= 1 B or one tensor larger than that (3.9 KiB, 40 B)");
}

TEST(StepPlan, CountsWireBytesInTheWirePrecisionAndTheCapInFloat32) {
  auto set = layout({262144, 262144, 262144});  // 1 MiB each in float32
  const nn::StepPlan f32(set->params(), {.bucket_cap_bytes = 2 << 20});
  const nn::StepPlan f16(set->params(), {.bucket_cap_bytes = 2 << 20, .fp16_wire = true});
  ASSERT_EQ(f32.size(), 2u);
  ASSERT_EQ(f16.size(), 2u);  // float16 on the wire does not change how tensors are grouped
  EXPECT_EQ(f32.wire_element_bytes(), 4u);
  EXPECT_EQ(f16.wire_element_bytes(), 2u);
  EXPECT_EQ(f32.wire_bytes(), 3u << 20);
  EXPECT_EQ(f16.wire_bytes(), (3u << 20) / 2);
  EXPECT_EQ(f32.wire_bytes(f32.buckets()[0]), 2u << 20);
}

TEST(StepPlan, ABucketIsReadyWhenItsLowestDeclaredParameterIs) {
  auto set = layout({100, 100, 100, 100});
  const nn::StepPlan plan(set->params(), with_cap(2 * 112 * sizeof(float)));  // two aligned tensors a bucket
  ASSERT_EQ(plan.size(), 2u);
  EXPECT_EQ(plan.buckets()[0].first_param, 2u);  // backward reaches p3 then p2: bucket 0 complete at p2
  EXPECT_EQ(plan.buckets()[1].first_param, 0u);
}

TEST(StepPlan, RejectsFewerThanOneBackwardPassPerStep) {
  auto set = layout({10});
  try {
    (void)nn::StepPlan(set->params(), {.backward_passes_per_step = 0});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.parameter(), "backward_passes_per_step");
    EXPECT_EQ(e.kind(), ErrorKind::usage);
  }
}

}  // namespace
