// Gradient averaging on a communication thread while backward runs (train/overlapped_averager.h):
// bit for bit what GradientAverager gives after backward, for every bucket layout, float16 on the
// wire, several steps, and parameters never reported; buckets go as soon as their parameters are
// final; a bad report is an error.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "comm/local.h"
#include "core/error.h"
#include "nn/model.h"
#include "train/gradient_averager.h"
#include "train/overlapped_averager.h"

using namespace scalelab;

namespace {

// Rank r's gradient element i at step s (not exact in float: the order of additions matters).
float grad_of(int r, int s, std::size_t i) {
  return 0.37f * static_cast<float>((i * 7 + static_cast<std::size_t>(r) * 13 + static_cast<std::size_t>(s) * 5) % 101) /
         3.0f - 5.1f;
}

// Runs `steps` steps on `ranks` local ranks: each rank's cnn gradients set, then averaged after
// backward and, from the same values, on the thread as a real backward reports its parameters.
void check(int ranks, const std::string& algo, std::size_t cap, bool fp16, int steps) {
  comm::run_local(ranks, [&](comm::Communicator& comm) {
    auto model = nn::make_model("cnn", nn::Shape{1, 28, 28}, 10, 1);
    model->reserve(2);
    auto& params = model->parameters();
    auto g = params.grads();
    const nn::AveragingOptions opts{.bucket_cap_bytes = cap, .fp16_wire = fp16};
    train::GradientAverager after(comm, algo, nn::StepPlan(params.params(), opts));
    train::OverlappedAverager during(comm, algo, nn::StepPlan(params.params(), opts), g);
    ASSERT_EQ(during.plan().size(), after.plan().size());
    nn::Tensor x(nn::Shape{2, 1, 28, 28}), dlogits(nn::Shape{2, 10});
    x.fill(0.5f);
    dlogits.fill(0.0f);  // backward adds nothing: the gradients stay the values set below
    for (int s = 0; s < steps; ++s) {
      std::vector<float> expected(g.size());
      for (std::size_t i = 0; i < g.size(); ++i) expected[i] = grad_of(comm.rank(), s, i);
      after.average(expected);
      model->zero_grad();
      for (std::size_t i = 0; i < g.size(); ++i) g[i] = grad_of(comm.rank(), s, i);
      (void)model->forward(x.view(), true);
      model->backward(dlogits.view(), [&](std::size_t p) { during.param_ready(p); });
      during.finish();
      for (std::size_t i = 0; i < g.size(); ++i) {
        ASSERT_EQ(g[i], expected[i]) << "element " << i << " rank " << comm.rank() << " step " << s;
      }
      if (ranks > 1) {
        ASSERT_EQ(during.last_spans().size(), during.plan().size());
        for (const auto& [b, e] : during.last_spans()) EXPECT_LE(b, e);
      }
    }
  });
}

}  // namespace

TEST(OverlappedAverager, EqualsAveragingAfterBackwardBitForBit) {
  for (int ranks : {1, 2, 3}) check(ranks, "ring", 0, false, 2);  // one bucket per tensor
  check(3, "ring", 64 << 10, false, 3);                            // several buckets
  check(2, "library", std::size_t{64} << 20, false, 2);            // one bucket
  check(3, "recursive_doubling", 4096, true, 2);                   // float16 on the wire
}

// Parameters backward never reports (a step without the hook) are final at finish().
TEST(OverlappedAverager, FinishAveragesWhatWasNotReported) {
  comm::run_local(3, [&](comm::Communicator& comm) {
    auto model = nn::make_model("mlp", nn::Shape{1, 8, 8}, 10, 1);
    auto g = model->parameters().grads();
    train::OverlappedAverager avg(comm, "ring", nn::StepPlan(model->parameters().params(), {.bucket_cap_bytes = 0}), g);
    for (std::size_t i = 0; i < g.size(); ++i) g[i] = static_cast<float>(comm.rank());
    avg.param_ready(0);  // one of several
    avg.finish();
    for (std::size_t i = 0; i < g.size(); ++i) ASSERT_EQ(g[i], 1.0f) << i;  // (0 + 1 + 2) / 3
  });
}

// A bucket whose parameters are all final is averaged before finish() and before the rest of the
// step's parameters are reported.
TEST(OverlappedAverager, ABucketGoesAsSoonAsItsParametersAreFinal) {
  comm::run_local(2, [&](comm::Communicator& comm) {
    auto model = nn::make_model("mlp", nn::Shape{1, 8, 8}, 10, 1);
    auto& params = model->parameters();
    auto g = params.grads();
    train::OverlappedAverager avg(comm, "ring", nn::StepPlan(params.params(), {.bucket_cap_bytes = 0}), g);
    ASSERT_GE(avg.plan().size(), 2U);
    // Bucket 0 holds the last-declared parameter alone (one bucket per tensor).
    const std::size_t last = params.count() - 1;
    ASSERT_EQ(avg.plan().bucket_of(last), 0U);
    avg.param_ready(last);
    // Nothing else is reported until the thread has averaged bucket 0 (with the peer's thread).
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (avg.finished_buckets() == 0 && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    ASSERT_EQ(avg.finished_buckets(), 1U) << "bucket 0 was not averaged while backward was still running";
    for (std::size_t p = last; p-- > 0;) avg.param_ready(p);
    avg.finish();
    EXPECT_EQ(avg.finished_buckets(), 0U);  // a new step
  });
}

TEST(OverlappedAverager, AParameterReportedTwiceOrOutOfRangeIsAnError) {
  comm::run_local(1, [&](comm::Communicator& comm) {
    auto model = nn::make_model("mlp", nn::Shape{1, 8, 8}, 10, 1);
    train::OverlappedAverager avg(comm, "ring", nn::StepPlan(model->parameters().params(), {}), model->parameters().grads());
    avg.param_ready(0);
    EXPECT_THROW(avg.param_ready(0), Error);
    EXPECT_THROW(avg.param_ready(model->parameters().count()), Error);
    avg.finish();
    avg.param_ready(0);  // a new step
    avg.finish();
  });
}
