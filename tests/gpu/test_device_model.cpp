// The CUDA engine's layers (gpu/device_model.h, gpu/device_layers.h, gpu/layer_kernels.h) in
// float32 against lib/nn's CPU layers (device_model_compare.h says how, and to what tolerance).
// Models are chosen to cover each device layer: the lab's cnn, mlp and resnet (BatchNorm, residual
// blocks with identity and projected shortcuts, global average pooling), a strided padded
// convolution without bias, overlapping max pooling (stride 1), a standalone ReLU, BatchNorm over
// dense features; also two accumulated backward passes, evaluation forwards (resnet's with running
// statistics that are not the initial ones), and a smaller batch after the largest (cuDNN
// re-described). The engine's device checks (no GPU: one error line) run everywhere.
#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "device_model_compare.h"
#include "comm/local.h"
#include "nn/batch_norm.h"
#include "nn/dense.h"
#include "nn/dropout.h"
#include "nn/flatten.h"
#include "nn/global_avg_pool.h"
#include "nn/maxpool2d.h"
#include "nn/relu.h"
#include "train/engine.h"

namespace scalelab::gpu {
namespace {

using namespace device_model_test;  // NOLINT(google-build-using-namespace): the shared helpers

TEST(DeviceModel, CnnMatchesTheCpuModel) {
  SKIP_WITHOUT_GPU();
  ASSERT_TRUE(kTf32Off);
  compare_zoo("cnn", {32}, kConvTolerance);
}

TEST(DeviceModel, MlpMatchesTheCpuModelInFloat32) {
  SKIP_WITHOUT_GPU();
  compare_zoo("mlp", {64}, 1e-4);
}

TEST(DeviceModel, TwoBackwardPassesAccumulateAndASmallerBatchFollows) {
  SKIP_WITHOUT_GPU();
  compare_zoo("cnn", {16, 16, 5}, kConvTolerance);
}

TEST(DeviceModel, StridedPaddedConvolutionWithoutBias) {
  SKIP_WITHOUT_GPU();
  const Builder b = [](nn::Model& m) {
    m.add(conv(6, 3, 2, 1, false, nn::Activation::relu));
    m.add(conv(5, 5, 1, 2, true, nn::Activation::none));
    m.add(std::make_unique<nn::Flatten>());
    m.add(std::make_unique<nn::Dense>(4, nn::Activation::none));
  };
  auto cpu = build(b, nn::Shape{3, 11, 9}, 4, 5);
  auto twin = build(b, nn::Shape{3, 11, 9}, 4, 5);
  compare(*cpu, *twin, {7}, kConvTolerance);
}

TEST(DeviceModel, OverlappingMaxPoolAndStandaloneRelu) {
  SKIP_WITHOUT_GPU();
  const Builder b = [](nn::Model& m) {
    m.add(conv(4, 3, 1, 0, true, nn::Activation::none));
    m.add(std::make_unique<nn::ReLU>());
    m.add(std::make_unique<nn::MaxPool2D>(3, 1));
    m.add(std::make_unique<nn::Dropout>(0.5f));
    m.add(std::make_unique<nn::Flatten>());
    m.add(std::make_unique<nn::Dense>(3, nn::Activation::relu));
    m.add(std::make_unique<nn::Dense>(3, nn::Activation::none));
  };
  auto cpu = build(b, nn::Shape{2, 10, 10}, 3, 9);
  auto twin = build(b, nn::Shape{2, 10, 10}, 3, 9);
  compare(*cpu, *twin, {6}, kConvTolerance);
}

// A convolution with a ReLU followed by a max-pool leaves the ReLU's derivative to the pool's
// backward: with overlapping windows (the scattering kernel), with windows that leave the last
// row and column uncovered, and with gaps between windows (the gathering kernel).
TEST(DeviceModel, ConvolutionReluFoldedIntoEveryKindOfMaxPool) {
  SKIP_WITHOUT_GPU();
  // 10 x 10 inputs leave a 7 x 7 map (windows with a remainder); 11 x 11 an 8 x 8 one, which
  // 2 x 2 windows tile exactly (the one-thread-per-window backward).
  for (const auto& [pool, stride, size] : {std::tuple<std::size_t, std::size_t, std::size_t>{3, 1, 10}, {2, 2, 10},
                                           {2, 3, 10}, {2, 2, 11}}) {
    SCOPED_TRACE("pool " + std::to_string(pool) + ", stride " + std::to_string(stride) + ", input " + std::to_string(size));
    const Builder b = [pool = pool, stride = stride](nn::Model& m) {
      m.add(conv(4, 3, 1, 0, true, nn::Activation::relu));
      m.add(conv(3, 2, 1, 0, true, nn::Activation::relu));
      m.add(std::make_unique<nn::MaxPool2D>(pool, stride));
      m.add(std::make_unique<nn::Flatten>());
      m.add(std::make_unique<nn::Dense>(3, nn::Activation::none));
    };
    auto cpu = build(b, nn::Shape{2, size, size}, 3, 9);
    auto twin = build(b, nn::Shape{2, size, size}, 3, 9);
    compare(*cpu, *twin, {6}, kConvTolerance);
  }
}

TEST(DeviceModel, EvaluationForwardMatches) {
  SKIP_WITHOUT_GPU();
  auto cpu = zoo("cnn", nn::Shape{1, 28, 28}, 10, 11);
  auto twin = zoo("cnn", nn::Shape{1, 28, 28}, 10, 11);
  compare(*cpu, *twin, {20}, kConvTolerance, /*training=*/false);
}

TEST(DeviceModel, ResnetMatchesTheCpuModel) {
  SKIP_WITHOUT_GPU();
  ASSERT_TRUE(kTf32Off);
  // Two accumulated passes and a smaller batch: BatchNorm's statistics per batch, running
  // statistics moved three times, every residual block (identity and projected shortcuts).
  compare_zoo("resnet", {12, 12, 5}, kConvTolerance);
}

// SyncBatchNorm's device path against the CPU layer's reducer path, with an exchange that changes
// every sum and the count (as other ranks' contributions would), so that a device layer ignoring
// the exchanged values, or reading them in another order, differs from the CPU.
TEST(DeviceModel, SyncBatchNormUsesTheExchangedStatisticsAsTheCpuDoes) {
  SKIP_WITHOUT_GPU();
  ASSERT_TRUE(kTf32Off);
  const nn::Shape in{1, 28, 28};
  auto cpu = zoo("resnet", in, 10, 17);
  auto twin = zoo("resnet", in, 10, 17);
  const Exchange exchange = [](float* sums, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) sums[i] *= 1.0f + 0.125f * static_cast<float>(i % 3);
  };
  compare(*cpu, *twin, {10, 6}, kConvTolerance, true, exchange);
}

TEST(DeviceModel, ResnetEvaluationUsesTheRunningStatistics) {
  SKIP_WITHOUT_GPU();
  auto cpu = zoo("resnet", nn::Shape{1, 28, 28}, 10, 13);
  auto twin = zoo("resnet", nn::Shape{1, 28, 28}, 10, 13);
  // Running statistics other than the initial (0, 1), the same on both sides.
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> u(0.5f, 1.5f);
  for (float& v : cpu->parameters().state()) v = u(rng);
  std::copy(cpu->parameters().state().begin(), cpu->parameters().state().end(), twin->parameters().state().begin());
  compare(*cpu, *twin, {9}, kConvTolerance, /*training=*/false);
}

TEST(DeviceModel, BatchNormOverDenseFeaturesAndGlobalAveragePooling) {
  SKIP_WITHOUT_GPU();
  // A ReLU after each BatchNorm and before the second: a bias (or shift) that a BatchNorm's mean
  // removes has a zero gradient, and comparing rounding noise says nothing.
  const Builder b = [](nn::Model& m) {
    m.add(conv(3, 3, 1, 1, false, nn::Activation::none));
    m.add(std::make_unique<nn::BatchNorm>(0.2f, 1e-3f));
    m.add(std::make_unique<nn::ReLU>());
    m.add(std::make_unique<nn::GlobalAvgPool>());
    m.add(std::make_unique<nn::Dense>(6, nn::Activation::relu));
    m.add(std::make_unique<nn::BatchNorm>());  // (C) inputs: BatchNorm1d
    m.add(std::make_unique<nn::ReLU>());
    m.add(std::make_unique<nn::Dense>(4, nn::Activation::none));
  };
  auto cpu = build(b, nn::Shape{2, 5, 7}, 4, 3);
  auto twin = build(b, nn::Shape{2, 5, 7}, 4, 3);
  compare(*cpu, *twin, {8, 3}, kConvTolerance);
}

// The CUDA engine's graph path: forward, loss and backward captured once as a CUDA graph, then
// replayed after each prepare_forward. Each replay must use the new Dropout keys (the CPU model
// draws new masks every forward), so the logits change between replays and match the CPU's, and
// the gradients of both replays accumulate as the CPU's do.
TEST(DeviceModel, CapturedGraphReplaysWithEachForwardsDropoutKeys) {
  SKIP_WITHOUT_GPU();
  ASSERT_TRUE(kTf32Off);
  const nn::Shape in{1, 28, 28};
  const std::size_t n = 16, classes = 10, per = in.numel();
  auto cpu = zoo("cnn", in, classes, 21);
  auto twin = zoo("cnn", in, classes, 21);
  cpu->reseed(7, 3);
  Stream stream;
  DeviceModel dm(*twin, n, 7, 3, stream.s);
  dm.load_values(cpu->parameters());
  std::mt19937 rng(99);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> images(n * per);
  std::vector<std::int32_t> labels(n);
  for (float& v : images) v = u(rng);
  for (auto& l : labels) l = static_cast<std::int32_t>(rng() % classes);
  DeviceBuffer<float> x(n * per, "x"), dlogits(n * classes, "dlogits");
  DeviceBuffer<std::int32_t> y(n, "labels");
  DeviceBuffer<double> tally(2, "tally");
  DeviceBuffer<unsigned long long> bad(1, "bad");
  cuda_check(cudaMemcpy(x.data(), images.data(), n * per * sizeof(float), cudaMemcpyHostToDevice), "copy x");
  cuda_check(cudaMemcpy(y.data(), labels.data(), n * sizeof(std::int32_t), cudaMemcpyHostToDevice), "copy y");
  cpu->zero_grad();
  dm.zero_grad();
  dm.prepare_forward(true);
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  const float* d_logits = nullptr;
  cuda_check(cudaStreamBeginCapture(stream.s, cudaStreamCaptureModeThreadLocal), "begin capture");
  d_logits = dm.enqueue_forward(x.data(), n, true);
  softmax_cross_entropy(d_logits, y.data(), n, classes, dlogits.data(), 1.0f, tally.data(), bad.data(), stream.s);
  dm.backward(dlogits.data(), n, {});
  cuda_check(cudaStreamEndCapture(stream.s, &graph), "end capture");
  cuda_check(cudaGraphInstantiate(&exec, graph, 0), "instantiate");
  std::vector<float> previous;
  for (int replay = 0; replay < 2; ++replay) {
    if (replay > 0) dm.prepare_forward(true);
    cuda_check(cudaGraphLaunch(exec, stream.s), "launch");
    cuda_check(cudaStreamSynchronize(stream.s), "sync");
    std::vector<float> got(n * classes);
    cuda_check(cudaMemcpy(got.data(), d_logits, got.size() * sizeof(float), cudaMemcpyDeviceToHost), "logits");
    const nn::ConstTensorView logits = cpu->forward({images.data(), in.with_batch(n)}, true);
    nn::Tensor dl(nn::Shape{n, classes});
    (void)nn::softmax_cross_entropy(logits, std::span<const std::int32_t>(labels), dl.view(), 1.0f);
    EXPECT_LT(rel_error(got.data(), logits.data, n * classes), kConvTolerance) << "replay " << replay;
    cpu->backward(dl.view());
    if (replay > 0) {
      EXPECT_GT(rel_error(got.data(), previous.data(), got.size()), 1e-3) << "the same mask twice";
    }
    previous = got;
  }
  dm.store_grads(twin->parameters());
  const nn::ParameterSet& want = cpu->parameters();
  for (std::size_t i = 0; i < want.count(); ++i) {
    EXPECT_LT(rel_error(twin->parameters().grad(i), want.grad(i), want.info(i).size), kConvTolerance) << want.info(i).name;
  }
  (void)cudaGraphExecDestroy(exec);
  (void)cudaGraphDestroy(graph);
}

// A layer type no device twin exists for.
class Mystery final : public nn::Layer {
 public:
  [[nodiscard]] std::string type() const override { return "Mystery"; }
  [[nodiscard]] nn::Shape output_shape(const nn::Shape& in) const override { return in; }
  void forward(nn::ConstTensorView, nn::TensorView, bool) override {}
  void backward(nn::ConstTensorView, nn::ConstTensorView, nn::ConstTensorView, nn::TensorView) override {}
};

TEST(DeviceModel, ModelsWithoutDeviceLayersAreNamed) {
  SKIP_WITHOUT_GPU();
  const Builder b = [](nn::Model& m) {
    m.add(std::make_unique<nn::Flatten>());
    m.add(std::make_unique<Mystery>());
    m.add(std::make_unique<nn::Dense>(3, nn::Activation::none));
  };
  auto model = build(b, nn::Shape{1, 4, 4}, 3, 1);
  Stream stream;
  try {
    DeviceModel dm(*model, 4, 1, 0, stream.s);
    FAIL() << "a Mystery layer was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::usage);
    const std::string m = e.what();
    EXPECT_NE(m.find("Mystery"), std::string::npos) << m;
    EXPECT_NE(m.find("resnet"), std::string::npos) << m;  // the zoo's models that do run
  }
}

// Without a GPU (here: no driver), --device cuda is one runtime error naming the CUDA error.
TEST(CudaEngine, WithoutAUsableGpuIsOneLineNamingTheCause) {
  const std::string why = no_device_reason();
  if (why.empty()) GTEST_SKIP() << "a GPU is usable here: the no-GPU error cannot be provoked";
  comm::run_local(1, [&](comm::Communicator& c) {
    train::TrainConfig config;
    config.device = "cuda";
    try {
      (void)train::make_engine(config, c, nn::Shape{1, 28, 28}, 10);
      ADD_FAILURE() << "make_engine succeeded without a GPU";
    } catch (const Error& e) {
      const std::string m = e.what();
      EXPECT_EQ(e.parameter(), "device") << m;  // the CLI prints --device in its place
      EXPECT_EQ(m.rfind("device cuda: ", 0), 0u) << m;
      EXPECT_NE(m.find("cudaGetDeviceCount"), std::string::npos) << m;
      EXPECT_EQ(m.find('\n'), std::string::npos) << m;
    }
  });
}

}  // namespace
}  // namespace scalelab::gpu
