// TrainConfig::validate: every field that needs no data is checked in one place, and the error
// names the field as TrainConfig spells it, so that each front end can print its own flag.
#include <cmath>
#include <functional>
#include <string>

#include <gtest/gtest.h>

#include "core/error.h"
#include "train/config.h"

namespace scalelab::train {
namespace {

// Applies `change` to a valid config and expects a usage error about `parameter` whose message
// contains `fragment`.
void expect_rejected(const std::function<void(TrainConfig&)>& change, const std::string& parameter,
                     const std::string& fragment) {
  TrainConfig c;
  change(c);
  try {
    c.validate();
    FAIL() << parameter << ": accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::usage) << e.what();
    EXPECT_EQ(e.parameter(), parameter) << e.what();
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

TEST(TrainConfig, TheDefaultsAreValid) { EXPECT_NO_THROW(TrainConfig{}.validate()); }

TEST(TrainConfig, EachBadFieldIsNamedWithItsValueAndAFix) {
  expect_rejected([](TrainConfig& c) { c.device = "gpu"; }, "device", "device gpu: unknown device; use cpu or cuda");
  expect_rejected([](TrainConfig& c) { c.model = "vgg"; }, "model", "vgg: unknown model; use one of");
  expect_rejected([](TrainConfig& c) { c.optimizer = "adamw"; }, "optimizer", "adamw: unknown optimizer");
  expect_rejected([](TrainConfig& c) { c.batch_size = 0; }, "batch_size", "batch_size 0: a batch needs at least one sample");
  expect_rejected([](TrainConfig& c) { c.epochs = 0; }, "epochs", "train at least one epoch");
  expect_rejected([](TrainConfig& c) { c.lr = 0; }, "lr", "positive finite");
  expect_rejected([](TrainConfig& c) { c.lr = INFINITY; }, "lr", "positive finite");
  expect_rejected([](TrainConfig& c) { c.threads = 0; }, "threads", "at least one");
  expect_rejected([](TrainConfig& c) { c.backward_passes_per_step = 0; }, "backward_passes_per_step", "at least one");
  expect_rejected([](TrainConfig& c) { c.loader_workers = 0; }, "loader_workers", "at least one");
  expect_rejected([](TrainConfig& c) { c.prefetch = 0; }, "prefetch", "at least one");
  expect_rejected([](TrainConfig& c) { c.stall_timeout_s = -1; }, "stall_timeout_s", ">= 0");
  expect_rejected([](TrainConfig& c) { c.algo = "butterfly"; }, "algo", "unknown allreduce algorithm 'butterfly'");
}

TEST(TrainConfig, TheOptimizerOptionsAreCheckedToo) {
  expect_rejected([](TrainConfig& c) { c.optimizer_options.momentum = 1.0f; }, "momentum", "[0, 1)");
  expect_rejected([](TrainConfig& c) { c.optimizer_options.momentum = -0.1f; }, "momentum", "[0, 1)");
  expect_rejected([](TrainConfig& c) { c.optimizer_options.momentum = NAN; }, "momentum", "[0, 1)");
  expect_rejected([](TrainConfig& c) { c.optimizer_options.weight_decay = -1e-4f; }, "weight_decay", "0 or more");
  expect_rejected([](TrainConfig& c) { c.optimizer_options.weight_decay = INFINITY; }, "weight_decay", "0 or more");
}

}  // namespace
}  // namespace scalelab::train
