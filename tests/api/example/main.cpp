// Data-parallel training with scalelab's public API, Horovod's steps in order:
//   mpirun -n 2 ./train_example [epochs] [max_steps_per_epoch]
// trains an MLP on Fashion-MNIST and prints, on rank 0, the test accuracy averaged over the ranks
// and whether every rank ended with the same parameters.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <span>
#include <string>

#include <scalelab/scalelab.h>

int main(int argc, char** argv) {
  return scalelab::run_main([&] {
    scalelab::Runtime runtime;                                        // 1. initialise
    const int epochs = argc > 1 ? std::atoi(argv[1]) : 1;
    const std::size_t max_steps = argc > 2 ? std::strtoul(argv[2], nullptr, 10) : 0;
    const std::size_t batch = 64;

    scalelab::Datasets data = scalelab::load_datasets({.name = "fashion-mnist"});
    scalelab::Model model("mlp", data.train, /*seed=*/42);
    scalelab::ShardedSampler sampler(data.train.size(), scalelab::size(), scalelab::rank(),
                                     /*seed=*/42);                    // 2. shard the data
    std::size_t steps = sampler.steps(batch);
    if (max_steps > 0 && max_steps < steps) steps = max_steps;

    scalelab::LrSchedule schedule({.base_lr = 0.05, .scaling = "linear",   // 3. scale the lr,
                                   .reference_batch = static_cast<int>(batch),  // with warm-up
                                   .global_batch = static_cast<int>(batch) * scalelab::size(),
                                   .warmup = "horovod", .warmup_epochs = 0.25,
                                   .workers = scalelab::size(), .epochs = static_cast<double>(epochs),
                                   .steps_per_epoch = static_cast<long>(steps)});
    scalelab::Optimizer sgd(model, "sgd", {.momentum = 0.9f});
    scalelab::DistributedOptimizer optimizer(sgd);                    // 4. average the gradients
    scalelab::broadcast_from_rank0(model, sgd);                      // 5. start from rank 0's state

    scalelab::Batch b;
    long global_step = 0;
    for (int epoch = 0; epoch < epochs; ++epoch) {
      sampler.set_epoch(static_cast<std::uint64_t>(epoch));
      scalelab::BatchStats train;
      for (std::size_t s = 0; s < steps; ++s) {
        data.train.fill(sampler.batch_indices(s, batch), b);
        train += model.train_batch(b, optimizer.gradient_scale());
        optimizer.step(static_cast<float>(schedule.lr(global_step++)));
      }
      // 6. metrics averaged over the ranks; the test split shared exactly once across them.
      scalelab::BatchStats test;
      const auto shard = scalelab::ShardedSampler::exact_shard(data.test.size(), scalelab::size(), scalelab::rank());
      for (std::size_t i = 0; i < shard.size(); i += 1000) {
        const std::size_t n = std::min<std::size_t>(1000, shard.size() - i);
        data.test.fill(std::span<const std::size_t>(shard).subspan(i, n), b);
        test += model.evaluate_batch(b);
      }
      const double train_loss = scalelab::average_over_ranks(train.loss_sum / train.samples);
      const auto sums = scalelab::sum_over_ranks({test.correct, test.samples});
      scalelab::on_rank0([&] {                                      // 7. one rank reports
        std::printf("epoch %d: train loss %.4f, test accuracy %.4f\n", epoch + 1, train_loss, sums[0] / sums[1]);
      });
    }
    const bool agree = scalelab::parameters_agree(model);
    scalelab::on_rank0([&] {
      std::printf("ranks %d, parameters %s across ranks\n", scalelab::size(), agree ? "identical" : "DIFFERENT");
    });
    return agree ? 0 : 1;
  });
}
