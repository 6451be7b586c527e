// Models by name: the cnn's layers, parameter count and FLOPs against PyTorch's model, the
// summary, whole-model gradients against finite differences, gradient accumulation across
// backward passes, and usage errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "grad_check.h"
#include "nn/compute.h"
#include "nn/loss.h"
#include "nn/maxpool2d.h"
#include "nn/model.h"

namespace scalelab::nn {
namespace {

TEST(Model, CnnHasTheCourseLayersAndPyTorchsParameterCount) {
  auto m = make_model("cnn", Shape{1, 28, 28}, 10, 1);
  std::vector<std::string> types;
  for (std::size_t i = 0; i < m->layer_count(); ++i) types.push_back(m->layer(i).type());
  EXPECT_EQ(types, (std::vector<std::string>{"Conv2D", "Conv2D", "MaxPooling2D", "Dropout", "Flatten", "Dense", "Dropout",
                                             "Dense"}));
  // nn.Conv2d(1,32,3): 32*9+32; nn.Conv2d(32,64,3): 64*288+64; Linear(9216,128); Linear(128,10).
  const std::size_t expect = (32 * 9 + 32) + (64 * 288 + 64) + (9216 * 128 + 128) + (128 * 10 + 10);
  std::size_t floats = 0;
  for (const auto& p : m->parameters().params()) floats += p.size;
  EXPECT_EQ(floats, expect);
  EXPECT_NE(m->summary().find(std::to_string(expect)), std::string::npos);
  EXPECT_NE(m->summary().find("(None, 64, 24, 24)"), std::string::npos);
}

TEST(Model, CnnFlopsAreAbout72MPerImage) {
  auto m = make_model("cnn", Shape{1, 28, 28}, 10, 1);
  const double conv1 = 2.0 * 32 * 9 * 26 * 26, conv2 = 2.0 * 64 * 288 * 24 * 24, d1 = 2.0 * 9216 * 128, d2 = 2.0 * 128 * 10;
  FlopCount f = m->flops_per_image();
  EXPECT_DOUBLE_EQ(f.forward, conv1 + conv2 + d1 + d2);
  // Backward: weight gradients for all, input gradients for all but the first layer.
  EXPECT_DOUBLE_EQ(f.backward(), (conv1 + conv2 + d1 + d2) + (conv2 + d1 + d2));
  EXPECT_NEAR((f.forward + f.backward()) / 1e6, 72, 1);
}

TEST(Model, UnknownNameIsAUsageErrorListingTheModels) {
  try {
    (void)make_model("vgg", Shape{1, 28, 28}, 10, 1);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), 2);
    for (const auto& n : model_names()) EXPECT_NE(std::string(e.what()).find(n), std::string::npos) << e.what();
  }
}

TEST(Model, WrongInputShapeIsAUsageError) {
  auto m = make_model("mlp", Shape{1, 28, 28}, 10, 1);
  Tensor x(Shape{2, 3, 28, 28});
  EXPECT_THROW((void)m->forward(x.view(), false), Error);
}

// SyncBatchNorm needs a layer that normalizes with batch statistics: resnet has them (BatchNorm
// and residual blocks), the others none (train refuses --sync-batchnorm for them).
TEST(Model, OnlyResnetUsesBatchStatistics) {
  EXPECT_TRUE(make_model("resnet", Shape{1, 12, 12}, 10, 1)->uses_batch_statistics());
  for (const char* name : {"cnn", "mlp", "trivial"}) {
    EXPECT_FALSE(make_model(name, Shape{1, 12, 12}, 10, 1)->uses_batch_statistics()) << name;
  }
}

// The runs fusion makes one unit: the cnn's two convolutions and its pool (the first chained into
// the second, which computes the pool); the mlp and the resnet have none.
TEST(Model, FusedGroupsAreTheRunsFusionJoins) {
  const auto cnn = make_model("cnn", Shape{1, 28, 28}, 10, 1);
  const std::vector<std::pair<std::size_t, std::size_t>> groups = cnn->fused_groups();
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_EQ(groups[0], std::make_pair(std::size_t{0}, std::size_t{2}));
  EXPECT_EQ(cnn->layer(2).type(), "MaxPooling2D");
  EXPECT_TRUE(make_model("mlp", Shape{1, 28, 28}, 10, 1)->fused_groups().empty());
  EXPECT_TRUE(make_model("resnet", Shape{1, 28, 28}, 10, 1)->fused_groups().empty());
}

TEST(Model, SameSeedSameParametersOtherSeedOther) {
  auto a = make_model("resnet", Shape{1, 12, 12}, 10, 5), b = make_model("resnet", Shape{1, 12, 12}, 10, 5),
       c = make_model("resnet", Shape{1, 12, 12}, 10, 6);
  EXPECT_TRUE(std::equal(a->parameters().values().begin(), a->parameters().values().end(), b->parameters().values().begin()));
  EXPECT_FALSE(std::equal(a->parameters().values().begin(), a->parameters().values().end(), c->parameters().values().begin()));
  EXPECT_EQ(a->parameters().layout_signature(), c->parameters().layout_signature());
}

// Cross-entropy of the model on a fixed batch; the gradient of a random sample of the flat
// parameter buffer (and of every bias/norm tensor's first element) against finite differences.
// Tolerance 1e-2: a whole model in float with BatchNorm over 3 samples rounds more than one layer,
// while a wrong formula gives errors of order 1. A step in a conv weight moves thousands of
// activations, so some cross a ReLU or max-pool kink: up to 30% of the picks may be set aside
// (each still leaves 100+ compared).
void check_model_gradient(const std::string& name, const Shape& in) {
  testing::SkipKinks kinks;  // ReLU and max pooling
  auto m = make_model(name, in, 4, 11);
  const std::size_t n = 3;
  Rng rng(2);
  Tensor x(in.with_batch(n)), d(Shape{n, 4});
  testing::fill_normal(x.data(), x.numel(), rng);
  std::vector<std::int32_t> y = {0, 3, 1};
  auto loss = [&] {
    m->reseed(77, 0);  // the same Dropout masks in every forward
    return softmax_cross_entropy(m->forward(x.view(), true), y).loss;
  };
  m->zero_grad();
  m->reseed(77, 0);
  softmax_cross_entropy(m->forward(x.view(), true), y, d.view());
  m->backward(d.view());
  ParameterSet& p = m->parameters();
  // The first element of every tensor, and a random sample of the whole flat buffer.
  std::vector<std::size_t> picks;
  for (std::size_t i = 0; i < p.count(); ++i) picks.push_back(p.info(i).offset);
  for (int i = 0; i < 150; ++i) {
    std::size_t t = rng.below(p.count());
    picks.push_back(p.info(t).offset + rng.below(p.info(t).size));
  }
  std::vector<float> analytic;
  for (std::size_t at : picks) analytic.push_back(p.grads()[at]);
  EXPECT_LT(testing::gradient_error_at(loss, p.values().data(), picks, analytic.data(), 1e-3f, 0.3), 1e-2) << name;
}

TEST(Model, WholeCnnGradientMatchesFiniteDifferences) { check_model_gradient("cnn", Shape{1, 8, 8}); }
TEST(Model, WholeResnetGradientMatchesFiniteDifferences) { check_model_gradient("resnet", Shape{2, 8, 8}); }
TEST(Model, WholeMlpGradientMatchesFiniteDifferences) { check_model_gradient("mlp", Shape{1, 5, 5}); }

// The cnn's ReLU-activated convolution and the max-pool after it are fused (forward pools each
// chunk as it is computed; backward has the pool apply the ReLU's derivative), and the second
// convolution applies the first one's ReLU derivative in its col2im: logits and
// gradients equal the unfused layers' to the last bit, with inputs that make many of the
// convolution's outputs exactly 0 (negative biases) and the pooled ones too, at 1 and 2 threads.
// 28 x 28 images: one image per chunk, a 24 x 24 pool input (windows tile it: the pool's fast
// path); 11 x 11: all three images in one chunk, a 7 x 7 pool input (the general path).
class ModelFusion : public ::testing::TestWithParam<std::size_t> {};

TEST_P(ModelFusion, ConvolutionAndMaxPoolFusionGivesTheSameLogitsAndGradients) {
  const std::size_t side = GetParam();
  auto m = make_model("cnn", Shape{1, side, side}, 10, 3);
  const MaxPool2D* pool = nullptr;
  for (std::size_t i = 0; i < m->layer_count(); ++i) {
    if (auto* p = dynamic_cast<const MaxPool2D*>(&m->layer(i))) pool = p;
  }
  ASSERT_NE(pool, nullptr);
  ASSERT_TRUE(pool->applies_relu_mask()) << "build() fuses a ReLU convolution with the pool after it";
  for (std::size_t p : {std::size_t{1}, std::size_t{3}})  // the convolutions' biases: more outputs clipped to 0
    for (std::size_t j = 0; j < m->parameters().info(p).size; ++j) m->parameters().value(p)[j] -= 0.05f;
  Rng rng(5);
  Tensor x(Shape{3, 1, side, side}), d(Shape{3, 10});
  testing::fill_normal(x.data(), x.numel(), rng);
  std::vector<std::int32_t> y = {1, 7, 3};
  auto run = [&] {
    m->zero_grad();
    m->reseed(1, 0);
    const ConstTensorView logits = m->forward(x.view(), true);
    std::vector<float> out(logits.data, logits.data + logits.shape.numel());
    softmax_cross_entropy(logits, y, d.view());
    m->backward(d.view());
    out.insert(out.end(), m->parameters().grads().begin(), m->parameters().grads().end());
    return out;
  };
  for (int threads : {1, 2}) {
    set_compute_threads(threads);
    m->set_fusion(true);
    const std::vector<float> fused = run();
    const ParameterSet& ps = m->parameters();
    for (std::size_t p : {std::size_t{0}, std::size_t{2}}) {  // both convolutions' kernels
      std::size_t nonzero = 0;
      for (std::size_t j = 0; j < ps.info(p).size; ++j) nonzero += ps.grad(p)[j] != 0.0f;
      EXPECT_GT(nonzero, ps.info(p).size / 2) << "parameter " << p << ": too few gradients reach it to test it";
    }
    m->set_fusion(false);
    EXPECT_FALSE(pool->applies_relu_mask());
    const std::vector<float> plain = run();
    ASSERT_EQ(fused.size(), plain.size());
    // The first convolution, chained into the second (Model::set_fusion), sums its weight
    // gradient image by image rather than over a chunk of images at once, and with 2 threads
    // splits the images between them as the second convolution does: another order of the same
    // sums, for its weight and bias. Everything else is equal to the last bit.
    const std::size_t logits = 3 * 10, first = logits + ps.info(0).offset;
    const std::size_t first_end = logits + ps.info(1).offset + ps.info(1).size;
    for (std::size_t i = 0; i < fused.size(); ++i) {
      if (i >= first && i < first_end)
        ASSERT_NEAR(fused[i], plain[i], 1e-5f * (1.0f + std::abs(plain[i]))) << "value " << i << ", " << threads << " threads";
      else
        ASSERT_EQ(fused[i], plain[i]) << "value " << i << ", " << threads << " threads";
    }
  }
  set_compute_threads(1);
  m->set_fusion(true);
}

// 40: the first convolution's 38-wide output takes col2im's general path (the ReLU mask after
// the sums), 28 and 11 its vector path (the mask in registers).
INSTANTIATE_TEST_SUITE_P(ImageSides, ModelFusion, ::testing::Values(std::size_t{28}, std::size_t{11}, std::size_t{40}));

TEST(Model, BackwardPassesAccumulateUntilZeroGrad) {
  auto m = make_model("cnn", Shape{1, 10, 10}, 10, 3);
  Rng rng(4);
  Tensor x(Shape{2, 1, 10, 10}), d(Shape{2, 10});
  testing::fill_normal(x.data(), x.numel(), rng);
  std::vector<std::int32_t> y = {1, 7};
  auto pass = [&] {
    m->reseed(1, 0);
    softmax_cross_entropy(m->forward(x.view(), true), y, d.view());
    m->backward(d.view());
  };
  m->zero_grad();
  pass();
  std::vector<float> once(m->parameters().grads().begin(), m->parameters().grads().end());
  pass();
  for (std::size_t i = 0; i < once.size(); i += 97) EXPECT_NEAR(m->parameters().grads()[i], 2 * once[i], 1e-5f + 1e-4f * std::abs(once[i]));
  m->zero_grad();
  EXPECT_TRUE(std::all_of(m->parameters().grads().begin(), m->parameters().grads().end(), [](float g) { return g == 0; }));
}

TEST(Model, SmallerBatchesReuseTheBuffersAndGiveTheSameLogits) {
  auto m = make_model("cnn", Shape{1, 12, 12}, 10, 3);
  Rng rng(4);
  Tensor x(Shape{5, 1, 12, 12});
  testing::fill_normal(x.data(), x.numel(), rng);
  ConstTensorView all = m->forward(x.view(), false);
  std::vector<float> first(all.data, all.data + 2 * 10);
  ConstTensorView two = m->forward(x.view().slice(0, 2), false);
  EXPECT_EQ(two.shape, (Shape{2, 10}));
  for (std::size_t i = 0; i < first.size(); ++i) EXPECT_NEAR(two.data[i], first[i], 1e-5f);
}

TEST(Model, ParameterSetIsOneBufferWithKinds) {
  auto m = make_model("resnet", Shape{1, 12, 12}, 10, 1);
  const ParameterSet& p = m->parameters();
  std::size_t norm = 0, bias = 0;
  for (const auto& i : p.params()) {
    EXPECT_EQ(i.offset % 16, 0u) << i.name;
    EXPECT_LE(i.offset + i.size, p.size());
    norm += i.kind == ParamKind::norm_scale || i.kind == ParamKind::norm_shift;
    bias += i.kind == ParamKind::bias;
  }
  EXPECT_EQ(norm, 2u * 9);  // 9 BatchNorms: stem, 2 per block, 2 shortcut BNs
  EXPECT_EQ(bias, 1u);      // only the final Dense has a bias
  EXPECT_EQ(p.state().size(), 2u * (16 + 16 + 16 + 32 + 32 + 32 + 64 + 64 + 64));
}

}  // namespace
}  // namespace scalelab::nn
