// The CUDA engine's layers in bf16 and fp16 (gpu/precision.h) against lib/nn's float32 CPU layers
// (device_model_compare.h says how, and why the tolerances are what they are): every cnn and mlp
// layer, NHWC convolutions (the cnn) and 16-bit ones that stay NCHW, fp16's loss scale on the
// gradients, the refusal of layers with no 16-bit kernels, and dynamic loss scaling with the
// optimizer's skipped step (gpu/loss_scaler.h).
#include <gtest/gtest.h>

#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "device_model_compare.h"
#include "gpu/device_optimizer.h"
#include "gpu/loss_scaler.h"
#include "nn/dense.h"
#include "nn/flatten.h"
#include "nn/maxpool2d.h"
#include "nn/parameter.h"
#include "optim/optimizer.h"

namespace scalelab::gpu {
namespace {

using namespace device_model_test;  // NOLINT(google-build-using-namespace): the shared helpers

// The 16-bit precisions: every cnn and mlp layer (convolutions with the fused epilogue and the
// pool's ReLU fold, dense products, Dropout) against the float32 CPU model, to the type's rounding.
TEST(DeviceModel, CnnInBf16MatchesTheCpuModelToItsRounding) {
  SKIP_WITHOUT_GPU();
  compare_zoo("cnn", {64}, kBf16Tolerance, Precision::bf16);
}

TEST(DeviceModel, CnnInFp16MatchesTheCpuModelToItsRounding) {
  SKIP_WITHOUT_GPU();
  compare_zoo("cnn", {64}, kFp16Tolerance, Precision::fp16);
}

TEST(DeviceModel, MlpInBf16AndFp16TwoPassesAndASmallerBatch) {
  SKIP_WITHOUT_GPU();
  compare_zoo("mlp", {48, 32}, kBf16Tolerance, Precision::bf16);
  compare_zoo("mlp", {48, 32}, kFp16Tolerance, Precision::fp16);
}

// fp16's loss scale multiplies the logit gradients before they are rounded: the parameter
// gradients come out that many times larger (divided back by compare()).
TEST(DeviceModel, Fp16LossScaleScalesEveryGradient) {
  SKIP_WITHOUT_GPU();
  compare_zoo("cnn", {32}, kFp16Tolerance, Precision::fp16, 1024.0f);
}

TEST(DeviceModel, LayersWithoutHalfKernelsAreNamedForBf16) {
  SKIP_WITHOUT_GPU();
  auto model = zoo("resnet", nn::Shape{1, 28, 28}, 10, 1);
  Stream stream;
  try {
    DeviceModel dm(*model, 8, 1, 0, stream.s, Precision::bf16);
    FAIL() << "resnet was built in bf16";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::usage);
    EXPECT_EQ(e.parameter(), "precision");
    const std::string m = e.what();
    EXPECT_NE(m.find("BatchNormalization"), std::string::npos) << m;
    EXPECT_NE(m.find("cnn"), std::string::npos) << m;  // the models that do run in 16 bits
    EXPECT_NE(m.find("fp32 or tf32"), std::string::npos) << m;
  }
}

// Dynamic loss scaling on the device: an overflowed gradient sets the optimizer's skip flag, the
// optimizer then changes nothing, the scale halves and the step is counted; a finite one is
// unscaled, applied, and after `interval` good steps the scale doubles.
TEST(LossScaler, OverflowSkipsTheStepAndHalvesTheScaleGrowthDoublesIt) {
  SKIP_WITHOUT_GPU();
  nn::ParameterSet layout;
  (void)layout.add("w", nn::Shape{8}, nn::ParamKind::weight);
  layout.finalize();
  const std::size_t n = layout.size();
  Stream stream;
  DeviceOptimizer opt("sgd", optim::OptimizerOptions{}, layout);
  LossScaler scaler(1024.0f, 2);
  DeviceBuffer<float> values(n, "values"), grads(n, "grads");
  std::vector<float> v0(n, 1.0f), g(n, 2048.0f), got(n);
  cuda_check(cudaMemcpy(values.data(), v0.data(), n * sizeof(float), cudaMemcpyHostToDevice), "values");
  auto step = [&](float bad) {
    std::vector<float> gi = g;
    gi[3] = bad;
    cuda_check(cudaMemcpy(grads.data(), gi.data(), n * sizeof(float), cudaMemcpyHostToDevice), "grads");
    opt.prepare(0.5f, stream.s);
    scaler.unscale(grads.data(), n, opt.skip_flag(), stream.s);
    opt.apply(values.data(), grads.data(), stream.s);
    scaler.update(opt.skip_flag(), stream.s);
    cuda_check(cudaStreamSynchronize(stream.s), "sync");
    cuda_check(cudaMemcpy(got.data(), values.data(), n * sizeof(float), cudaMemcpyDeviceToHost), "values back");
  };
  step(std::numeric_limits<float>::infinity());
  EXPECT_EQ(got, v0) << "an overflowed step changed the values";
  LossScaleState st = scaler.read(stream.s);
  EXPECT_EQ(st.scale, 512.0f);
  EXPECT_EQ(st.skipped, 1u);
  step(std::numeric_limits<float>::quiet_NaN());
  EXPECT_EQ(got, v0) << "a NaN step changed the values";
  EXPECT_EQ(scaler.read(stream.s).scale, 256.0f);
  step(2048.0f);  // unscaled by 256: 8, so w = 1 - 0.5 * 8
  for (float v : got) EXPECT_EQ(v, -3.0f);
  st = scaler.read(stream.s);
  EXPECT_EQ(st.scale, 256.0f);
  EXPECT_EQ(st.good_steps, 1);
  step(2048.0f);
  st = scaler.read(stream.s);
  EXPECT_EQ(st.scale, 512.0f) << "two good steps in a row (the interval) double the scale";
  EXPECT_EQ(st.skipped, 2u);
}

// In 16 bits a run of convolutions on a one-channel input that ends in a max-pool tiling its input
// works in NHWC (the cnn tests above cover it: on an H200 their errors against the CPU were the same
// to three digits as when the cnn ran NCHW); a pool that leaves a remainder (a 7 x 7 map in 2 x 2
// windows) keeps the run NCHW, with the 16-bit bias, ReLU and pooling kernels of that layout.
TEST(DeviceModel, HalfConvolutionsThatStayNchw) {
  SKIP_WITHOUT_GPU();
  for (const Precision p : {Precision::bf16, Precision::fp16}) {
    SCOPED_TRACE(precision_name(p));
    const Builder b = [](nn::Model& m) {
      m.add(conv(4, 3, 1, 0, true, nn::Activation::relu));
      m.add(conv(3, 2, 1, 0, true, nn::Activation::relu));
      m.add(std::make_unique<nn::MaxPool2D>(2, 2));
      m.add(std::make_unique<nn::Flatten>());
      m.add(std::make_unique<nn::Dense>(3, nn::Activation::none));
    };
    auto cpu = build(b, nn::Shape{1, 10, 10}, 3, 9);
    auto twin = build(b, nn::Shape{1, 10, 10}, 3, 9);
    compare(*cpu, *twin, {16, 8}, p == Precision::bf16 ? kBf16Tolerance : kFp16Tolerance, true, {}, p);
  }
}

}  // namespace
}  // namespace scalelab::gpu
