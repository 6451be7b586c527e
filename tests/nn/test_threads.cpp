// More compute threads give the same results: a cnn step with 3 threads (image chunks spread over
// threads, per-thread gradient accumulators) matches one thread to float rounding.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "core/rng.h"
#include "nn/compute.h"
#include "nn/loss.h"
#include "nn/model.h"

namespace scalelab::nn {
namespace {

std::vector<float> gradients_with(int threads, const std::string& name) {
  set_compute_threads(threads);
  auto m = make_model(name, Shape{1, 28, 28}, 10, 3);
  const std::size_t batch = 12;
  Tensor x(Shape{batch, 1, 28, 28}), d(Shape{batch, 10});
  Rng rng(5);
  for (std::size_t i = 0; i < x.numel(); ++i) x.data()[i] = rng.uniform();
  std::vector<std::int32_t> y(batch);
  for (auto& l : y) l = static_cast<std::int32_t>(rng.below(10));
  m->zero_grad();
  softmax_cross_entropy(m->forward(x.view(), true), y, d.view());
  m->backward(d.view());
  set_compute_threads(1);
  return {m->parameters().grads().begin(), m->parameters().grads().end()};
}

TEST(ComputeThreads, ThreeThreadsGiveTheSameGradientsAsOne) {
  for (const char* name : {"cnn", "resnet"}) {
    const auto one = gradients_with(1, name), three = gradients_with(3, name);
    ASSERT_EQ(one.size(), three.size());
    double diff = 0, norm = 0;
    for (std::size_t i = 0; i < one.size(); ++i) {
      diff += double(one[i] - three[i]) * (one[i] - three[i]);
      norm += double(one[i]) * one[i];
    }
    EXPECT_LT(std::sqrt(diff / norm), 1e-5) << name;
  }
}

TEST(ComputeThreads, ParallelForCoversTheRangeOnce) {
  set_compute_threads(3);
  std::vector<int> hits(100, 0);
  parallel_for(hits.size(), [&](std::size_t b, std::size_t e, std::size_t w) {
    EXPECT_LT(w, 3u);
    for (std::size_t i = b; i < e; ++i) ++hits[i];
  });
  set_compute_threads(1);
  for (int h : hits) EXPECT_EQ(h, 1);
  EXPECT_THROW(set_compute_threads(0), Error);
}

}  // namespace
}  // namespace scalelab::nn
