// SyncBatchNorm: N ranks (threads, comm/local.h), each holding 1/N of a batch, produce exactly what
// one rank produces on the concatenated batch: the same outputs, the same running statistics, the
// same input gradients, and parameter gradients that sum to the one-rank gradient. Without the
// sync, the outputs differ (each rank normalises with its own batch's statistics).
#include <cmath>
#include <memory>
#include <vector>

#include <gtest/gtest.h>

#include "comm/local.h"
#include "core/rng.h"
#include "nn/batch_norm.h"
#include "nn/dense.h"
#include "nn/model.h"
#include "train/sync_batchnorm.h"

namespace scalelab {
namespace {

constexpr std::size_t kFeatures = 6, kClasses = 3, kBatch = 12;

std::unique_ptr<nn::Model> small_bn_model() {
  auto m = std::make_unique<nn::Model>("bn_test", nn::Shape{kFeatures}, kClasses, 7);
  m->add(std::make_unique<nn::Dense>(8, nn::Activation::none));
  m->add(std::make_unique<nn::BatchNorm>());
  m->add(std::make_unique<nn::Dense>(kClasses, nn::Activation::none));
  m->build();
  return m;
}

struct Data {
  std::vector<float> x, dy;
};
Data make_data() {
  Rng rng(123);
  Data d;
  // Features with a per-feature offset, so that halves of the batch have different statistics.
  for (std::size_t i = 0; i < kBatch * kFeatures; ++i) d.x.push_back(rng.normal(float(i % kFeatures) * (i < kBatch * kFeatures / 2 ? 1.0f : -1.0f), 1.5f));
  for (std::size_t i = 0; i < kBatch * kClasses; ++i) d.dy.push_back(rng.normal(0.0f, 0.1f));
  return d;
}

struct Reference {
  std::vector<float> out, grads, state;
};
Reference one_rank(const Data& d) {
  auto m = small_bn_model();
  m->zero_grad();
  auto out = m->forward({d.x.data(), nn::Shape{kBatch, kFeatures}}, true);
  Reference r;
  r.out.assign(out.data, out.data + out.numel());
  m->backward({d.dy.data(), nn::Shape{kBatch, kClasses}});
  auto g = m->parameters().grads();
  r.grads.assign(g.begin(), g.end());
  auto s = m->parameters().state();
  r.state.assign(s.begin(), s.end());
  return r;
}

void check_ranks(int ranks, bool sync) {
  const Data d = make_data();
  const Reference ref = one_rank(d);
  const std::size_t per = kBatch / std::size_t(ranks);
  const auto n = static_cast<std::size_t>(ranks);
  std::vector<std::vector<float>> outs(n), grads(n), states(n);
  comm::run_local(ranks, [&](comm::Communicator& comm) {
    auto m = small_bn_model();
    if (sync) train::enable_sync_batchnorm(*m, comm);
    const std::size_t r = std::size_t(comm.rank());
    m->zero_grad();
    auto out = m->forward({d.x.data() + r * per * kFeatures, nn::Shape{per, kFeatures}}, true);
    outs[r].assign(out.data, out.data + out.numel());
    m->backward({d.dy.data() + r * per * kClasses, nn::Shape{per, kClasses}});
    auto g = m->parameters().grads();
    grads[r].assign(g.begin(), g.end());
    auto s = m->parameters().state();
    states[r].assign(s.begin(), s.end());
  });
  double max_out_diff = 0;
  for (std::size_t r = 0; r < std::size_t(ranks); ++r) {
    for (std::size_t i = 0; i < per * kClasses; ++i)
      max_out_diff = std::max(max_out_diff, double(std::fabs(outs[r][i] - ref.out[r * per * kClasses + i])));
  }
  if (!sync) {
    EXPECT_GT(max_out_diff, 1e-2) << "local statistics should differ from the global ones";
    return;
  }
  EXPECT_LT(max_out_diff, 1e-4);
  for (std::size_t i = 0; i < ref.grads.size(); ++i) {
    double sum = 0;
    for (int r = 0; r < ranks; ++r) sum += grads[std::size_t(r)][i];
    EXPECT_NEAR(sum, ref.grads[i], 1e-4 + 1e-4 * std::fabs(ref.grads[i])) << "gradient " << i;
  }
  for (int r = 0; r < ranks; ++r) {
    for (std::size_t i = 0; i < ref.state.size(); ++i)
      EXPECT_NEAR(states[std::size_t(r)][i], ref.state[i], 1e-4 + 1e-4 * std::fabs(ref.state[i])) << "running stat " << i;
  }
}

TEST(SyncBatchNorm, TwoRanksMatchOneRankOnTheConcatenatedBatch) { check_ranks(2, true); }
TEST(SyncBatchNorm, ThreeRanksMatchOneRankOnTheConcatenatedBatch) { check_ranks(3, true); }
TEST(SyncBatchNorm, LocalStatisticsDifferWithoutIt) { check_ranks(2, false); }

}  // namespace
}  // namespace scalelab
