// Gradient averaging equals the plain mean over ranks, for every algorithm, with fusion on, off
// (one allreduce per tensor) and with float16 compression (within float16's precision).
#include <gtest/gtest.h>


#include "comm/local.h"
#include "comm/reduce.h"
#include "nn/model.h"
#include "train/gradient_averager.h"

using namespace scalelab;

namespace {

// Rank r's gradient element i, and the mean over n ranks computed directly.
float grad_of(int r, std::size_t i) {
  return static_cast<float>((i * 7 + static_cast<std::size_t>(r) * 13) % 101) / 64.0f - 0.75f;  // multiples of 1/64: exact
}
float mean_of(int n, std::size_t i) {
  double s = 0;
  for (int r = 0; r < n; ++r) s += grad_of(r, i);
  return static_cast<float>(s / n);
}

void check(int ranks, const std::string& algo, std::size_t threshold, bool fp16) {
  comm::run_local(ranks, [&](comm::Communicator& comm) {
    auto model = nn::make_model("mlp", nn::Shape{1, 8, 8}, 10, 1);
    auto& params = model->parameters();
    auto g = params.grads();
    for (std::size_t i = 0; i < g.size(); ++i) g[i] = grad_of(comm.rank(), i);
    train::GradientAverager avg(comm, algo, nn::StepPlan(params.params(), {.bucket_cap_bytes = threshold, .fp16_wire = fp16}));
    if (threshold == 0) {
      EXPECT_EQ(avg.plan().size(), params.count());
    }
    avg.average(g);
    // float16 keeps 11 significant bits: each rank's |g/n| < 1 rounds to within 2^-11 of itself,
    // and the sum rounds once more.
    const float tol = fp16 ? 2e-3f : 1e-6f;
    for (std::size_t i = 0; i < g.size(); ++i) {
      ASSERT_NEAR(g[i], mean_of(comm.size(), i), tol) << "element " << i << " rank " << comm.rank();
    }
  });
}

}  // namespace

TEST(GradientAverager, EqualsTheMeanForEveryAlgorithm) {
  for (const std::string& algo : collectives::algorithm_names(collectives::Collective::allreduce)) {
    for (int ranks : {1, 2, 3, 4}) check(ranks, algo, std::size_t{64} << 20, false);
  }
}

TEST(GradientAverager, BucketsAndPerTensorGiveTheSameMean) {
  check(3, "ring", 4096, false);  // buckets of whole tensors up to 4 KiB (the larger ones alone)
  check(3, "ring", 0, false);     // one allreduce per tensor
}

TEST(GradientAverager, Fp16CompressionStaysWithinHalfPrecision) {
  check(2, "ring", std::size_t{64} << 20, true);
  check(3, "library", 1 << 12, true);
}
