// A training step allocates nothing: after two warm-up steps, further steps of the cnn (forward,
// loss, backward, Adam) take no new page faults (each costs ~10 us on these VMs, so a step that
// allocated and freed its buffers would be dominated by them).
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <vector>

#include "core/rng.h"
#include "nn/loss.h"
#include "nn/model.h"
#include "optim/factory.h"

namespace scalelab::nn {
namespace {

long minor_faults() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_minflt;
}

TEST(TrainingStep, TakesNoPageFaultsAfterWarmUp) {
  for (const char* name : {"cnn", "resnet"}) {
    auto model = make_model(name, Shape{1, 28, 28}, 10, 1);
    auto opt = optim::make_optimizer("adam", {});
    const std::size_t batch = 32;
    Tensor x(Shape{batch, 1, 28, 28}), d(Shape{batch, 10});
    Rng rng(1);
    for (std::size_t i = 0; i < x.numel(); ++i) x.data()[i] = rng.uniform();
    std::vector<std::int32_t> y(batch);
    for (auto& l : y) l = static_cast<std::int32_t>(rng.below(10));
    auto step = [&] {
      model->zero_grad();
      softmax_cross_entropy(model->forward(x.view(), true), y, d.view());
      model->backward(d.view());
      opt->step(model->parameters(), 1e-3f);
    };
    step();
    step();
    const long before = minor_faults();
    for (int i = 0; i < 3; ++i) step();
    // A handful for the stack or the loader is tolerable; a per-step buffer would be hundreds.
    EXPECT_LE(minor_faults() - before, 8) << name;
  }
}

}  // namespace
}  // namespace scalelab::nn
