// The engine seam (train/engine.h): the CPU engine computes exactly what nn::Model, the loss and
// the optimizer compute when called directly (the trainer's behaviour before the seam), the
// --device names, and the one-GPU-per-rank rule (host logic, testable without a GPU).
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "comm/local.h"
#include "core/error.h"
#include "nn/loss.h"
#include "optim/factory.h"
#include "train/engine.h"

using namespace scalelab;
using namespace scalelab::train;

namespace {

TEST(Engine, CpuEngineStepEqualsTheModelAndOptimizerCalledDirectly) {
  TrainConfig c;
  c.model = "cnn";
  c.batch_size = 6;
  c.optimizer = "adam";
  const nn::Shape shape{1, 28, 28};
  const std::size_t n = 6, classes = 10;
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  std::vector<float> images(n * shape.numel());
  std::vector<std::int32_t> labels(n);
  for (float& v : images) v = u(rng);
  for (auto& l : labels) l = static_cast<std::int32_t>(rng() % classes);

  comm::run_local(1, [&](comm::Communicator& comm) {
    auto engine = make_engine(c, comm, shape, classes);
    EXPECT_EQ(engine->device(), "cpu");
    // The reference: the same model built and seeded as the engine builds it.
    auto model = nn::make_model(c.model, shape, classes, c.seed);
    model->reseed(c.seed, 0);
    auto opt = optim::make_optimizer(c.optimizer, c.optimizer_options);
    nn::Tensor dl(nn::Shape{n, classes});

    engine->zero_grad();
    engine->forward(images.data(), n, true);
    engine->backward(labels.data(), n, 0.5f, true);
    engine->average_gradients();
    engine->step(0.01f);

    model->zero_grad();
    const nn::ConstTensorView logits = model->forward({images.data(), shape.with_batch(n)}, true);
    const nn::LossResult r = nn::softmax_cross_entropy(logits, std::span<const std::int32_t>(labels), dl.view(), 0.5f);
    model->backward(dl.view());
    opt->step(model->parameters(), 0.01f);

    const Tally t = engine->train_tally();
    EXPECT_DOUBLE_EQ(t.loss_sum, r.loss * double(n));
    EXPECT_DOUBLE_EQ(t.correct, double(r.correct));
    EXPECT_DOUBLE_EQ(t.samples, double(n));
    const auto got = engine->model().parameters().values();
    const auto want = model->parameters().values();
    ASSERT_EQ(got.size(), want.size());
    for (std::size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i], want[i]) << "parameter float " << i;

    engine->reset_tallies();
    engine->evaluate(images.data(), labels.data(), n);
    EXPECT_DOUBLE_EQ(engine->eval_tally().samples, double(n));
    EXPECT_DOUBLE_EQ(engine->train_tally().samples, 0.0);
  });
}

TEST(Engine, MoreRanksOnANodeThanGpusNamesBothCounts) {
  EXPECT_NO_THROW(check_one_gpu_per_rank(1, 1));
  EXPECT_NO_THROW(check_one_gpu_per_rank(4, 8));
  EXPECT_NO_THROW(check_one_gpu_per_rank(8, 8));
  try {
    check_one_gpu_per_rank(3, 2);
    FAIL() << "3 ranks on 2 GPUs were accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::usage);
    EXPECT_EQ(std::string(e.what()),
              "device cuda: 3 ranks on this node but 2 GPUs; one GPU per rank: launch at most 2 ranks per node");
    EXPECT_EQ(e.parameter(), "device");
  }
}

}  // namespace
