// Assessment starter: trains an MLP on Fashion-MNIST on ONE rank. Your task: make it data-parallel,
// following Horovod's steps (README.md). Every TODO marks a place to change.
//   train OUT_DIR [EPOCHS]            (mpirun -n N train OUT_DIR once it is data-parallel)
// Writes OUT_DIR/train.log (one line per epoch) and OUT_DIR/model.ckpt (after every epoch), and
// prints the final test accuracy.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <span>
#include <string>

#include <scalelab/scalelab.h>

int main(int argc, char** argv) {
  return scalelab::run_main([&] {
    // Step 1 (done for you): initialise scalelab.
    scalelab::Runtime runtime;
    if (argc < 2) throw scalelab::ApiError("usage: train OUT_DIR [EPOCHS]", 2);
    const std::filesystem::path out = argv[1];
    const int epochs = argc > 2 ? std::atoi(argv[2]) : 1;
    const std::size_t batch = 64;          // per rank
    const double base_lr = 0.05;           // tuned for one rank at batch 64
    const std::uint64_t seed = 42;
    std::filesystem::create_directories(out);

    // TODO step 2: pin one device per rank (scalelab::local_rank()); this exercise runs on CPU
    // ranks, so say in the log which local rank you are instead.

    scalelab::Datasets data = scalelab::load_datasets({.name = "fashion-mnist"});
    scalelab::Model model("mlp", data.train, seed);

    // TODO step 3: shard the data: every rank must read its own part of each epoch.
    scalelab::ShardedSampler sampler(data.train.size(), /*world_size=*/1, /*rank=*/0, seed);
    const std::size_t steps = sampler.steps(batch);

    // TODO step 4: scale the learning rate with the number of ranks, with a warm-up
    // (scalelab::LrSchedule: linear scaling, Horovod's warm-up over the first half epoch).
    const float lr = static_cast<float>(base_lr);

    // TODO step 5: wrap the optimizer so that gradients are averaged over the ranks.
    scalelab::Optimizer optimizer(model, "sgd", {.momentum = 0.9f});

    // TODO step 6: make every rank start from rank 0's parameters and optimizer state.

    std::ofstream log(out / "train.log");  // TODO step 7: one writer for the log and the checkpoint
    scalelab::Batch b;
    double accuracy = 0;
    for (int epoch = 0; epoch < epochs; ++epoch) {
      sampler.set_epoch(static_cast<std::uint64_t>(epoch));
      scalelab::BatchStats train;
      for (std::size_t s = 0; s < steps; ++s) {
        data.train.fill(sampler.batch_indices(s, batch), b);
        train += model.train_batch(b);
        optimizer.step(lr);
      }
      scalelab::BatchStats test;
      const auto all = scalelab::ShardedSampler::exact_shard(data.test.size(), 1, 0);
      for (std::size_t i = 0; i < all.size(); i += 1000) {
        data.test.fill(std::span<const std::size_t>(all).subspan(i, std::min<std::size_t>(1000, all.size() - i)), b);
        test += model.evaluate_batch(b);
      }
      // TODO step 8: average the metrics over the ranks.
      const double train_loss = train.loss_sum / train.samples;
      accuracy = test.correct / test.samples;
      log << "epoch " << epoch + 1 << " train_loss " << train_loss << " test_accuracy " << accuracy << std::endl;
      scalelab::save_checkpoint((out / "model.ckpt").string(), model, optimizer, epoch + 1);
    }
    std::printf("final test accuracy %.4f\n", accuracy);
    return 0;
  });
}
