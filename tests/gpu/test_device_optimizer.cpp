// DeviceOptimizer (gpu/device_optimizer.h) against lib/optim's CPU optimizers: the same start,
// the same fresh random gradients each step, one and several steps, every option that changes
// the formula (momentum, dampening, Nesterov, weight decay, LARS/LAMB with and without the
// bias/norm exclusion), on a layout whose largest tensor spans several reduction blocks. Also the
// state: its segments, its download into a CPU optimizer and a restart from a CPU optimizer's
// state. These need a GPU and skip with the CUDA error without one. The argument checks that
// happen before any CUDA call run everywhere.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <ostream>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "no_device_reason.h"
#include "core/error.h"
#include "gpu/device_optimizer.h"
#include "gpu/device_optimizer_kernels.h"
#include "optim/factory.h"
#include "optim/lamb.h"
#include "optim/lars.h"

namespace scalelab::gpu {
namespace {

using test_support::no_device_reason;

// Every parameter kind, and one tensor of 3 reduction blocks and a bit.
std::unique_ptr<nn::ParameterSet> make_layout() {
  auto set = std::make_unique<nn::ParameterSet>();
  set->add("conv.weight", nn::Shape{8, 3, 3, 3}, nn::ParamKind::weight);
  set->add("conv.bias", nn::Shape{8}, nn::ParamKind::bias);
  set->add("bn.scale", nn::Shape{8}, nn::ParamKind::norm_scale);
  set->add("bn.shift", nn::Shape{8}, nn::ParamKind::norm_shift);
  set->add("fc.weight", nn::Shape{10, 3 * kOptimizerBlockSpan / 10 + 77}, nn::ParamKind::weight);
  set->add("fc.bias", nn::Shape{10}, nn::ParamKind::bias);
  set->finalize();
  return set;
}

void fill_normal(std::span<float> x, std::mt19937& rng, float sigma) {
  std::normal_distribution<float> d(0.0f, sigma);
  for (float& v : x) v = d(rng);
}

class DeviceFloats {
 public:
  explicit DeviceFloats(std::size_t n) : n_(n) {
    EXPECT_EQ(cudaMalloc(&p_, std::max<std::size_t>(n, 1) * sizeof(float)), cudaSuccess);
  }
  ~DeviceFloats() { cudaFree(p_); }
  DeviceFloats(const DeviceFloats&) = delete;
  DeviceFloats& operator=(const DeviceFloats&) = delete;
  [[nodiscard]] float* get() { return p_; }
  void upload(std::span<const float> h) { ASSERT_EQ(cudaMemcpy(p_, h.data(), n_ * sizeof(float), cudaMemcpyHostToDevice), cudaSuccess); }
  [[nodiscard]] std::vector<float> download() const {
    std::vector<float> h(n_);
    EXPECT_EQ(cudaMemcpy(h.data(), p_, n_ * sizeof(float), cudaMemcpyDeviceToHost), cudaSuccess);
    return h;
  }

 private:
  float* p_ = nullptr;
  std::size_t n_;
};

// |got - want| <= tol * (1 + |want|) everywhere; names the first element that is not.
void expect_close(std::span<const float> got, std::span<const float> want, float tol, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (std::size_t i = 0; i < got.size(); ++i) {
    ASSERT_LE(std::fabs(got[i] - want[i]), tol * (1.0f + std::fabs(want[i])))
        << what << " element " << i << ": device " << got[i] << ", CPU " << want[i];
  }
}

std::span<const float> cpu_trust(const optim::Optimizer& o) {
  if (auto* lars = dynamic_cast<const optim::Lars*>(&o)) return lars->last_trust_ratios();
  if (auto* lamb = dynamic_cast<const optim::Lamb*>(&o)) return lamb->last_trust_ratios();
  return {};
}

struct Case {
  std::string label;
  std::string name;
  optim::OptimizerOptions options;
  float lr;
};

// What gtest prints for a parameter (its label, not its bytes).
void PrintTo(const Case& c, std::ostream* os) { *os << c.label; }

std::vector<Case> cases() {
  std::vector<Case> c;
  optim::OptimizerOptions o;
  o.momentum = 0.0f;
  o.weight_decay = 1e-4f;
  c.push_back({"sgd_plain", "sgd", o, 0.05f});
  o = {};
  o.momentum = 0.9f;
  o.dampening = 0.1f;
  o.weight_decay = 5e-4f;
  c.push_back({"sgd_momentum_dampening", "sgd", o, 0.05f});
  o = {};
  o.nesterov = true;
  c.push_back({"sgd_nesterov", "sgd", o, 0.05f});
  o = {};
  o.weight_decay = 1e-2f;
  c.push_back({"adam_weight_decay", "adam", o, 1e-3f});
  o = {};
  o.weight_decay = 1e-4f;
  c.push_back({"lars_excluding_bias_and_norm", "lars", o, 0.5f});
  o.exclude_bias_and_norm = false;
  c.push_back({"lars_all_tensors", "lars", o, 0.5f});
  o = {};
  o.weight_decay = 1e-2f;
  o.eps = 1e-6f;
  c.push_back({"lamb_excluding_bias_and_norm", "lamb", o, 1e-2f});
  o.exclude_bias_and_norm = false;
  c.push_back({"lamb_all_tensors", "lamb", o, 1e-2f});
  return c;
}

class DeviceOptimizerMatchesCpu : public ::testing::TestWithParam<Case> {};

TEST_P(DeviceOptimizerMatchesCpu, OneAndSeveralSteps) {
  const std::string reason = no_device_reason();
  if (!reason.empty()) GTEST_SKIP() << "no usable CUDA device: " << reason;
  const Case& c = GetParam();
  auto params = make_layout();
  const std::size_t n = params->size();
  std::mt19937 rng(std::random_device{}());
  fill_normal(params->values(), rng, 0.5f);

  auto cpu = optim::make_optimizer(c.name, c.options);
  cpu->bind(*params);
  DeviceOptimizer dev(c.name, c.options, *params);
  ASSERT_EQ(dev.state_size(), cpu->state().size());
  ASSERT_EQ(dev.segments().size(), cpu->segments().size());
  for (std::size_t s = 0; s < dev.segments().size(); ++s) {
    EXPECT_EQ(dev.segments()[s].name, cpu->segments()[s].name);
    EXPECT_EQ(dev.segments()[s].offset, cpu->segments()[s].offset);
    EXPECT_EQ(dev.segments()[s].size, cpu->segments()[s].size);
  }

  DeviceFloats values(n), grads(n);
  values.upload(params->values());
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  for (int step = 1; step <= 5; ++step) {
    fill_normal(params->grads(), rng, 0.1f);
    grads.upload(params->grads());
    cpu->step(*params, c.lr);
    dev.step(values.get(), grads.get(), c.lr, stream);
    ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
    // Rounding differences (fused multiply-adds, the norms' summation order) compound per step.
    const float tol = 2e-6f * static_cast<float>(step + 1);
    expect_close(values.download(), params->values(), tol, c.label + " values after step " + std::to_string(step));
    const auto trust = cpu_trust(*cpu);
    if (!trust.empty()) expect_close(dev.trust_ratios(), trust, 1e-5f, c.label + " trust ratios");
    if (step == 1 || step == 5) {
      auto copy = optim::make_optimizer(c.name, c.options);
      copy->bind(*params);
      dev.copy_state_to(*copy);
      EXPECT_EQ(copy->step_count(), cpu->step_count());
      expect_close(copy->state(), cpu->state(), tol, c.label + " state after step " + std::to_string(step));
    }
  }
  cudaStreamDestroy(stream);
}

// A restart: the device optimizer takes the CPU optimizer's state and step count (as from a
// checkpoint or rank 0's broadcast) and continues exactly as the CPU one does.
TEST_P(DeviceOptimizerMatchesCpu, ContinuesFromACpuOptimizersState) {
  const std::string reason = no_device_reason();
  if (!reason.empty()) GTEST_SKIP() << "no usable CUDA device: " << reason;
  const Case& c = GetParam();
  auto params = make_layout();
  std::mt19937 rng(std::random_device{}());
  fill_normal(params->values(), rng, 0.5f);
  auto cpu = optim::make_optimizer(c.name, c.options);
  for (int step = 0; step < 3; ++step) {
    fill_normal(params->grads(), rng, 0.1f);
    cpu->step(*params, c.lr);
  }
  DeviceOptimizer dev(c.name, c.options, *params);
  dev.copy_state_from(*cpu);
  EXPECT_EQ(dev.step_count(), 3);
  DeviceFloats values(params->size()), grads(params->size());
  values.upload(params->values());
  fill_normal(params->grads(), rng, 0.1f);
  grads.upload(params->grads());
  cpu->step(*params, c.lr);
  dev.step(values.get(), grads.get(), c.lr, nullptr);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  expect_close(values.download(), params->values(), 4e-6f, c.label + " values after the restarted step");
}

INSTANTIATE_TEST_SUITE_P(AllOptimizers, DeviceOptimizerMatchesCpu, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<Case>& p) { return p.param.label; });

// ---- host logic and the checks that come before any CUDA call: they run on every machine -----

// Every float of every tensor in exactly one block, blocks in order, none past the span or
// straddling two tensors, each tensor's blocks where its table says.
TEST(SegmentLayout, BlocksTileEveryTensorExactly) {
  auto params = make_layout();
  const SegmentLayout s = segment_layout(params->params());
  ASSERT_EQ(s.first_block.size(), params->count());
  std::size_t expected_blocks = 0;
  for (std::size_t t = 0; t < params->count(); ++t) {
    const nn::ParamInfo& p = params->info(t);
    EXPECT_EQ(s.first_block[t], expected_blocks) << p.name;
    EXPECT_EQ(s.block_count[t], (p.size + kOptimizerBlockSpan - 1) / kOptimizerBlockSpan) << p.name;
    std::size_t next = p.offset;
    for (unsigned b = s.first_block[t]; b < s.first_block[t] + s.block_count[t]; ++b) {
      const DeviceSpan& sp = s.spans[b];
      EXPECT_EQ(sp.tensor, t);
      EXPECT_EQ(sp.begin, next) << p.name << " block " << b;
      EXPECT_GT(sp.end, sp.begin);
      EXPECT_LE(sp.end - sp.begin, kOptimizerBlockSpan);
      next = sp.end;
    }
    EXPECT_EQ(next, p.offset + p.size) << p.name;
    expected_blocks += s.block_count[t];
  }
  EXPECT_EQ(s.spans.size(), expected_blocks);
  EXPECT_EQ(s.block_count[4], 4u);  // fc.weight: 3 full blocks and a bit
}


TEST(DeviceOptimizerChecks, UnknownNameIsTheCpuFactorysUsageError) {
  auto params = make_layout();
  try {
    DeviceOptimizer dev("adagrad", {}, *params);
    FAIL() << "an unknown optimizer was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::usage);
    EXPECT_NE(std::string(e.what()).find("choose one of"), std::string::npos) << e.what();
  }
}

TEST(DeviceOptimizerChecks, BadOptionsAreTheCpuOptimizersUsageErrors) {
  auto params = make_layout();
  optim::OptimizerOptions o;
  o.momentum = -0.5f;
  EXPECT_THROW(DeviceOptimizer("sgd", o, *params), Error);
  o = {};
  o.beta1 = 1.0f;
  EXPECT_THROW(DeviceOptimizer("adam", o, *params), Error);
  o = {};
  o.nesterov = true;
  EXPECT_THROW(DeviceOptimizer("lars", o, *params), Error);
}

TEST(DeviceOptimizerChecks, BadLearningRateIsAUsageErrorBeforeAnyLaunch) {
  auto params = make_layout();
  optim::OptimizerOptions o;
  o.momentum = 0.0f;  // plain SGD keeps no state: nothing is allocated on the device
  DeviceOptimizer dev("sgd", o, *params);
  EXPECT_EQ(dev.state_size(), 0u);
  for (float lr : {0.0f, -0.1f, std::nanf("")}) {
    try {
      dev.step(nullptr, nullptr, lr, nullptr);
      FAIL() << "lr " << lr << " was accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::usage);
      EXPECT_EQ(e.parameter(), "lr") << e.what();  // the CLI prints --lr in its place
    }
  }
}

TEST(DeviceOptimizerChecks, WithoutAGpuStateAllocationFailsWithOneLine) {
  const std::string reason = no_device_reason();
  if (reason.empty()) GTEST_SKIP() << "a GPU is usable here; this test covers machines without one";
  auto params = make_layout();
  try {
    DeviceOptimizer dev("adam", {}, *params);
    FAIL() << "the device state was allocated without a usable GPU";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_EQ(e.kind(), ErrorKind::runtime);
    EXPECT_NE(m.find("CUDA"), std::string::npos) << m;
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
  }
}

TEST(DeviceOptimizerChecks, StateCopyNeedsTheSameOptimizer) {
  auto params = make_layout();
  optim::OptimizerOptions o;
  o.momentum = 0.0f;
  DeviceOptimizer dev("sgd", o, *params);
  auto adam = optim::make_optimizer("adam", {});
  adam->bind(*params);
  EXPECT_THROW(dev.copy_state_to(*adam), Error);
  EXPECT_THROW(dev.copy_state_from(*adam), Error);
  auto sgd = optim::make_optimizer("sgd", o);
  sgd->bind(*params);
  sgd->set_step_count(7);
  dev.copy_state_from(*sgd);  // no state to move: no CUDA call
  EXPECT_EQ(dev.step_count(), 7);
}

}  // namespace
}  // namespace scalelab::gpu
