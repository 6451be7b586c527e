// Whole training runs on the local communicator (ranks as threads): the promises of Horovod's
// recipe hold in scalelab's trainer.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <mutex>

#include "comm/local.h"
#include "core/error.h"
#include "train/trainer.h"

namespace fs = std::filesystem;
using namespace scalelab;
using namespace scalelab::train;

namespace {

TrainConfig small_config() {
  TrainConfig c;
  c.model = "mlp";
  c.dataset.name = "synthetic";
  c.dataset.synthetic_train = 640;
  c.dataset.synthetic_test = 200;
  c.batch_size = 16;
  c.epochs = 1;
  c.optimizer = "sgd";
  c.lr = 0.05;
  c.verbose = false;
  return c;
}

// Trains `config` on `ranks` threads; returns every rank's final parameters and records.
struct RunOutcome {
  std::vector<std::vector<float>> params;
  std::vector<TrainResult> results;
};

RunOutcome train_on(int ranks, const TrainConfig& config) {
  RunOutcome run;
  run.params.resize(static_cast<std::size_t>(ranks));
  run.results.resize(static_cast<std::size_t>(ranks));
  comm::run_local(ranks, [&](comm::Communicator& comm) {
    Trainer t(config, comm);
    const auto r = static_cast<std::size_t>(comm.rank());
    run.results[r] = t.run();
    const auto v = t.model().parameters().values();
    run.params[r].assign(v.begin(), v.end());
  });
  return run;
}

float max_abs_diff(const std::vector<float>& a, const std::vector<float>& b) {
  float m = 0;
  for (std::size_t i = 0; i < a.size(); ++i) m = std::max(m, std::abs(a[i] - b[i]));
  return m;
}

}  // namespace

TEST(Trainer, EveryRankEndsWithTheSameParameters) {
  TrainConfig c = small_config();
  c.max_steps = 6;
  const RunOutcome run = train_on(3, c);
  for (int r = 1; r < 3; ++r) EXPECT_EQ(run.params[0], run.params[static_cast<std::size_t>(r)]) << "rank " << r;
  const EpochRecord& e = run.results[0].epochs.at(0);
  EXPECT_EQ(e.steps, 6u);
  EXPECT_EQ(e.global_batch, 48u);
  EXPECT_EQ(e.ranks, 3);
  EXPECT_GT(e.images_per_second, 0.0);
  EXPECT_GT(e.peak_rss_mib, 0.0);
}

TEST(Trainer, TwoRanksMatchOneRankAccumulatingTwoBackwardPasses) {
  // Step s of 2 ranks sees the same 2B samples as step s of 1 rank with 2 micro-batches
  // (DistributedSampler interleaves the same permutation), and both average the same gradients.
  TrainConfig c = small_config();
  c.max_steps = 8;
  const RunOutcome two = train_on(2, c);
  c.backward_passes_per_step = 2;
  const RunOutcome one = train_on(1, c);
  EXPECT_EQ(one.results[0].epochs[0].global_batch, two.results[0].epochs[0].global_batch);
  EXPECT_LT(max_abs_diff(one.params[0], two.params[0]), 1e-5f);
}

// --algo shm puts the gradients in node memory, which shm reads in place: the same parameters
// on every rank as the ring gives (at 3 ranks, and with the communication thread), and the
// averaging line says where the gradients are.
TEST(Trainer, ShmWithGradientsInNodeMemoryMatchesTheRing) {
  for (const char* overlap : {"off", "on"}) {
    TrainConfig c = small_config();
    c.max_steps = 6;
    c.overlap = overlap;
    c.algo = "ring";
    const RunOutcome ring = train_on(3, c);
    c.algo = "shm";
    RunOutcome shm;
    shm.params.resize(3);
    std::vector<std::string> averaging(3);
    comm::run_local(3, [&](comm::Communicator& comm) {
      const auto r = static_cast<std::size_t>(comm.rank());
      {
        Trainer t(c, comm);
        averaging[r] = t.run().averaging;
        const auto v = t.model().parameters().values();
        shm.params[r].assign(v.begin(), v.end());
      }
      // A second trainer on the same communicator (as converge builds one per run) reuses the
      // first one's buffer rather than taking more node memory.
      Trainer again(c, comm);
      EXPECT_EQ(comm.shared_place(again.model().parameters().grads().data(), sizeof(float)).buffer, 0);
    });
    for (std::size_t r = 0; r < 3; ++r) {
      EXPECT_EQ(shm.params[r], shm.params[0]) << "overlap " << overlap << ", rank " << r;
      EXPECT_NE(averaging[r].find("gradients in node memory, read in place"), std::string::npos) << averaging[r];
    }
    EXPECT_LT(max_abs_diff(shm.params[0], ring.params[0]), 1e-5f) << "overlap " << overlap;
  }
}

TEST(Trainer, LearnsTheSyntheticDataOnTwoRanks) {
  TrainConfig c = small_config();
  c.dataset.synthetic_train = 2000;
  c.epochs = 2;
  const RunOutcome run = train_on(2, c);
  const auto& epochs = run.results[0].epochs;
  ASSERT_EQ(epochs.size(), 2u);
  EXPECT_GT(epochs[1].test_accuracy, 0.8) << "test accuracy after 2 epochs";
  EXPECT_LT(epochs[1].loss, epochs[0].loss);
}

TEST(Trainer, ResumingFromACheckpointContinuesExactly) {
  const fs::path ckpt = fs::temp_directory_path() / ("scalelab_resume_" + std::to_string(::getpid()));
  TrainConfig c = small_config();
  c.optimizer = "adam";
  c.lr = 0.001;
  c.epochs = 2;
  const RunOutcome straight = train_on(2, c);
  c.epochs = 1;
  c.checkpoint = ckpt.string();
  (void)train_on(2, c);
  c.epochs = 2;
  c.resume = ckpt.string();
  const RunOutcome resumed = train_on(2, c);
  ASSERT_EQ(resumed.results[0].epochs.size(), 1u);
  EXPECT_EQ(resumed.results[0].epochs[0].epoch, 2);
  EXPECT_EQ(resumed.params[0], straight.params[0]);
  EXPECT_EQ(resumed.params[1], straight.params[0]);
  fs::remove(ckpt);
}

// The cnn draws dropout masks every training forward, a stream per rank: a resumed run continues
// those streams (and the sampler's order) where the checkpointed run left them, so stopping after
// epoch 2 and resuming to 3 gives the parameters and losses of an uninterrupted 3-epoch run, bit
// for bit, at 1 and 2 ranks.
TEST(Trainer, ResumingACnnWithDropoutContinuesItsRandomStreamsExactly) {
  for (const int ranks : {1, 2}) {
    const fs::path ckpt = fs::temp_directory_path() / ("scalelab_resume_cnn_" + std::to_string(::getpid()));
    TrainConfig c = small_config();
    c.model = "cnn";
    c.optimizer = "adam";
    c.lr = 0.001;
    c.max_steps = 4;
    c.evaluate = false;
    c.epochs = 3;
    const RunOutcome straight = train_on(ranks, c);
    c.epochs = 2;
    c.checkpoint = ckpt.string();
    (void)train_on(ranks, c);
    c.epochs = 3;
    c.resume = ckpt.string();
    const RunOutcome resumed = train_on(ranks, c);
    ASSERT_EQ(resumed.results[0].epochs.size(), 1u);
    EXPECT_EQ(resumed.results[0].epochs[0].loss, straight.results[0].epochs[2].loss) << ranks << " ranks";
    for (int r = 0; r < ranks; ++r) EXPECT_EQ(resumed.params[r], straight.params[0]) << ranks << " ranks, rank " << r;
    fs::remove(ckpt);
  }
}

TEST(Trainer, ResumingWithAnotherSeedIsAUsageErrorNamingTheSeed) {
  const fs::path ckpt = fs::temp_directory_path() / ("scalelab_resume_seed_" + std::to_string(::getpid()));
  TrainConfig c = small_config();
  c.max_steps = 2;
  c.evaluate = false;
  c.checkpoint = ckpt.string();
  (void)train_on(1, c);
  c.checkpoint.clear();
  c.resume = ckpt.string();
  c.epochs = 2;
  c.seed = 7;
  try {
    (void)train_on(1, c);
    FAIL() << "resumed with another seed";
  } catch (const Error& e) {
    EXPECT_EQ(e.parameter(), "seed");
    EXPECT_NE(std::string(e.what()).find("was trained with seed 42"), std::string::npos) << e.what();
  }
  fs::remove(ckpt);
}

TEST(Trainer, RanksWithDifferentModelsAreNamed) {
  try {
    comm::run_local(2, [&](comm::Communicator& comm) {
      TrainConfig c = small_config();
      if (comm.rank() == 1) c.model = "trivial";
      Trainer t(c, comm);
      (void)t.run();
    });
    FAIL() << "no error";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("rank 1"), std::string::npos) << m;
    EXPECT_NE(m.find("model"), std::string::npos) << m;
  }
}

TEST(Trainer, BatchLargerThanTheShardIsAUsageError) {
  TrainConfig c = small_config();
  c.batch_size = 400;  // 640 samples over 2 ranks: 320 each
  try {
    comm::run_local(2, [&](comm::Communicator& comm) { Trainer t(c, comm); });
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), 2);
    EXPECT_NE(std::string(e.what()).find("320 training samples"), std::string::npos) << e.what();
  }
}

// A learning rate far too high turns the loss NaN within a few steps: every rank stops at the same
// step with one error naming the step and the lr, and the checkpoint of the last good epoch stays.
TEST(Trainer, DivergingLossStopsEveryRankAndKeepsTheLastGoodCheckpoint) {
  const fs::path ckpt = fs::temp_directory_path() / ("scalelab_diverge_" + std::to_string(::getpid()));
  TrainConfig c = small_config();
  c.checkpoint = ckpt.string();
  (void)train_on(2, c);  // one good epoch
  std::ifstream in(ckpt, std::ios::binary);
  const std::string good((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_FALSE(good.empty());
  c.resume = ckpt.string();
  c.epochs = 2;
  c.lr = 1e9;
  std::mutex m;
  std::vector<std::string> errors;
  try {
    comm::run_local(2, [&](comm::Communicator& comm) {
      Trainer t(c, comm);
      try {
        (void)t.run();
      } catch (const Error& e) {
        const std::lock_guard lock(m);
        errors.emplace_back(e.what());
        throw;
      }
    });
    FAIL() << "a NaN loss trained on";
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), 2);
    EXPECT_EQ(e.parameter(), "lr");
  }
  ASSERT_EQ(errors.size(), 2u);  // both ranks stopped, at the same step
  EXPECT_EQ(errors[0], errors[1]);
  EXPECT_NE(errors[0].find("the loss became NaN at step "), std::string::npos) << errors[0];
  EXPECT_NE(errors[0].find("(epoch 2): the learning rate 1e+09 is probably too high"), std::string::npos) << errors[0];
  std::ifstream again(ckpt, std::ios::binary);
  EXPECT_EQ(std::string((std::istreambuf_iterator<char>(again)), std::istreambuf_iterator<char>()), good);
  fs::remove(ckpt);
}
