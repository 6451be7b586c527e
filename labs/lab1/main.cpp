// Lab 1: one rank vs many. The course's first lesson, on the machine at hand: train the Keras CNN
// on Fashion-MNIST on one rank, see what Horovod changes in a training script (and where each
// change lives in scalelab), train on N ranks, measure speed-up and scaling efficiency, and see
// that the N-times larger global batch costs accuracy after the same epochs (Lab 2's subject).
// Handout: docs/labs/lab1.md. Run: `lab1 --quick` (under 2 minutes) or `lab1` (under 10).
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "lab_main.h"

namespace {

using scalelab::lab::LabOptions;
using scalelab::lab::StepContext;
using Json = nlohmann::json;

// The quick variant trains on this many images per "epoch" at every rank count (the steps per
// epoch shrink as the global batch grows, so every run sees the same data, as full epochs do).
constexpr int kQuickImagesPerEpoch = 10240;
constexpr int kBatch = 128;        // per rank, as the course
constexpr int kEmulatedWorkers = 8;  // the course's 8 GPUs, for the accuracy-gap step

std::vector<std::string> train_args(const LabOptions& o, int ranks, int passes, const std::string& json) {
  std::vector<std::string> a{"train", "--model", "cnn", "--dataset", o.dataset, "--epochs", "1", "--batch-size",
                             std::to_string(kBatch), "--threads", "1", "--seed", "42", "--json", json};
  if (passes > 1) a.insert(a.end(), {"--backward-passes-per-step", std::to_string(passes)});
  if (o.quick) a.insert(a.end(), {"--max-steps", std::to_string(std::max(1, kQuickImagesPerEpoch / (kBatch * ranks * passes)))});
  return a;
}

std::vector<std::string> under_mpi(int ranks, std::vector<std::string> train) {
  std::vector<std::string> a{"run", "-np", std::to_string(ranks), "--"};
  a.insert(a.end(), train.begin(), train.end());
  return a;
}

const Json& last_epoch(const Json& doc, const std::string& file) { return StepContext::last_of(doc, "epochs", file); }

std::string epoch_label(const LabOptions& o) {
  return o.quick ? fmt::format("1 quick epoch ({} images)", kQuickImagesPerEpoch) : "1 epoch";
}

void one_rank(StepContext& ctx) {
  const Json doc = ctx.run(train_args(ctx.options(), 1, 1, ctx.out("one-rank.json")), ctx.out("one-rank.json"));
  const Json& e = last_epoch(doc, ctx.out("one-rank.json"));
  ctx.note("images_per_second", e.at("images_per_second"));
  ctx.note("test_accuracy", e.at("test_accuracy"));
  ctx.note("peak_rss_mib", e.at("peak_rss_mib"));
  ctx.say(fmt::format("\nOne rank: {:.0f} images/sec, test accuracy {:.4f} after {} (global batch {}).",
                      e.at("images_per_second").get<double>(), e.at("test_accuracy").get<double>(),
                      epoch_label(ctx.options()), kBatch));
  ctx.say("Question: how many images/sec would you expect from 2 ranks on this machine, and why not exactly 2x?");
}

void horovod_changes(StepContext& ctx) {
  struct Change {
    const char* horovod;
    const char* what;
    const char* where;
  };
  const Change changes[] = {
      {"hvd.init()", "join the job: learn rank, size and local rank from the launcher",
       "apps/scalelab/cmd_train.cpp cmd_train -> comm::make_communicator (lib/comm/factory.h)"},
      {"pin a GPU to hvd.local_rank()", "one device per rank; on CPU ranks, one core per rank (--threads 1)",
       "Communicator::local_rank() (lib/comm/communicator.h); the nccl backend picks the GPU by it"},
      {"shard the data", "each rank reads a disjoint 1/size of every epoch (DistributedSampler)",
       "data::ShardedSampler (lib/data/sampler.h), used in Trainer::run (lib/train/trainer.cpp)"},
      {"hvd.DistributedOptimizer(opt)", "average gradients by allreduce before every optimizer step",
       "train::GradientAverager::average (lib/train/gradient_averager.cpp), called by the CPU engine "
       "(CpuEngine::average_gradients, lib/train/engine_cpu.h; created in lib/train/engine_cpu.cpp), which "
       "Trainer::run calls after each backward pass"},
      {"hvd.broadcast_parameters / BroadcastGlobalVariablesCallback(0)",
       "every rank starts from rank 0's weights and optimizer state",
       "train::require_same_model + train::broadcast_from_rank0 (lib/train/replicate.cpp)"},
      {"save checkpoints on rank 0 only", "one writer; atomic: temp file, fsync, rename",
       "train::save_checkpoint (lib/train/checkpoint.cpp), called when rank == 0 in Trainer::run"},
  };
  int i = 1;
  for (const Change& c : changes) {
    ctx.say(fmt::format("{}. {}\n   {}\n   in scalelab: {}", i++, c.horovod, c.what, c.where));
    ctx.note(c.horovod, c.where);
  }
  ctx.say("\nThe launcher sets rank, size and local rank; each rank reports its place:");
  ctx.run({"run", "-np", std::to_string(ctx.options().ranks), "--", "info"});
  ctx.say("Question: which of these six changes would silently give a wrong model if you forgot it, and which "
          "would only waste time?");
}

void n_ranks(StepContext& ctx) {
  const int n = ctx.options().ranks;
  auto args = train_args(ctx.options(), n, 1, ctx.out("n-ranks.json"));
  args.insert(args.end(), {"--timeline", ctx.out("timeline.json")});
  const Json doc = ctx.run(under_mpi(n, args), ctx.out("n-ranks.json"));
  const Json& e = last_epoch(doc, ctx.out("n-ranks.json"));
  ctx.note("ranks", n);
  ctx.note("images_per_second", e.at("images_per_second"));
  ctx.note("test_accuracy", e.at("test_accuracy"));
  ctx.note("allreduce_seconds", e.at("allreduce_seconds"));
  ctx.note("timeline", ctx.out("timeline.json"));
  ctx.say(fmt::format("\n{} ranks: {:.0f} images/sec, test accuracy {:.4f} after {} (global batch {}); "
                      "{:.2f} s of the epoch went to allreduce on rank 0.",
                      n, e.at("images_per_second").get<double>(), e.at("test_accuracy").get<double>(),
                      epoch_label(ctx.options()),
                      e.at("global_batch").get<int>(), e.at("allreduce_seconds").get<double>()));
  ctx.say("Open " + ctx.out("timeline.json") + " in https://ui.perfetto.dev: one track per rank, each step's data wait, "
          "forward, backward, allreduce and optimizer phases.");
}

void scaling_table(StepContext& ctx) {
  const int n = ctx.options().ranks;
  std::vector<int> counts{1};  // 1, 2, 4, ... and N
  for (int r = 2; r <= n; r *= 2) counts.push_back(r);
  if (counts.back() != n) counts.push_back(n);
  const std::string ranks = fmt::format("{}", fmt::join(counts, ","));
  // Throughput needs no evaluation and no full epoch: 60 steps per run (quick: 25).
  const std::vector<std::string> args{"scale", "--rank-counts", ranks, "--out", ctx.out("scale"), "--json", ctx.out("scale.json"),
                                      "--model", "cnn", "--dataset", ctx.options().dataset, "--epochs", "1",
                                      "--batch-size", std::to_string(kBatch), "--threads", "1", "--no-eval",
                                      "--max-steps", ctx.options().quick ? "25" : "60"};
  const Json doc = ctx.run(args, ctx.out("scale.json"));
  const Json& last = StepContext::last_of(doc, "rows", ctx.out("scale.json"));
  ctx.note("rows", doc.at("rows"));
  ctx.note("chart", doc.value("chart", Json::object()));
  ctx.say(fmt::format("\nScaling efficiency at {} ranks: {:.1f}% (the course: about 91% on 8 V100s, 86-88% for "
                      "batch 2048 per GPU).",
                      last.at("ranks").get<int>(), last.at("efficiency").get<double>() * 100));
  if (ctx.unreliable()) {
    ctx.say("These runs shared the CPU with other processes, so this efficiency measures them, not scaling; "
            "rerun this step on a quiet machine.");
  }
  ctx.say("Question: this machine has 2 cores. What happens to the efficiency at 4 ranks, and why?");
}

void accuracy_gap(StepContext& ctx) {
  const Json one = ctx.earlier(ctx.out("one-rank.json"), 1);
  const Json many = ctx.earlier(ctx.out("n-ranks.json"), 3);
  const int n = ctx.options().ranks;
  const int passes = std::max(1, (kEmulatedWorkers + n - 1) / n);
  ctx.say(fmt::format("{} workers' global batch ({} x {}) emulated by {} ranks x {} backward passes per step:",
                      n * passes, n * passes, kBatch, n, passes));
  const Json big = ctx.run(under_mpi(n, train_args(ctx.options(), n, passes, ctx.out("large-batch.json"))),
                           ctx.out("large-batch.json"));
  struct Line {
    const Json* doc;
    const char* label;
    std::string file;
  };
  ctx.say("\n  global batch   test accuracy   gap to one rank   (same epochs, same learning rate)");
  const double base = last_epoch(one, ctx.out("one-rank.json")).at("test_accuracy").get<double>();
  Json rows = Json::array();
  for (const Line& l : {Line{&one, "one rank", ctx.out("one-rank.json")}, Line{&many, "N ranks", ctx.out("n-ranks.json")},
                        Line{&big, "N ranks, 8x batch", ctx.out("large-batch.json")}}) {
    const Json& e = last_epoch(*l.doc, l.file);
    const double acc = e.at("test_accuracy").get<double>();
    ctx.say(fmt::format("  {:>12}   {:>13.4f}   {:>+14.2f} pt   {}", e.at("global_batch").get<int>(), acc,
                        (acc - base) * 100, l.label));
    rows.push_back({{"label", l.label}, {"global_batch", e.at("global_batch")}, {"test_accuracy", acc},
                    {"gap_points", (acc - base) * 100}});
  }
  ctx.note("accuracy", rows);
  ctx.say("\nSame epochs, fewer optimizer steps: with an N-times larger global batch the model takes N times fewer "
          "steps of the same learning rate. The course saw 0.9851 on one GPU and 0.8957 on eight after 8 epochs.\n"
          "Lab 2 (large-batch convergence) recovers the gap with learning-rate scaling, warm-up, LARS and LAMB.");
}

}  // namespace

int main(int argc, char** argv) {
  scalelab::lab::Lab lab("lab1", "One rank vs many: throughput, speed-up, scaling efficiency");
  lab.add_step({"Train on one rank",
                "The course's Keras CNN (conv 32, conv 64, max-pool, dropout, dense 128, dropout, dense 10) on\n"
                "Fashion-MNIST, batch 128, one rank with one thread. Note images/sec and test accuracy.",
                one_rank});
  lab.add_step({"What Horovod changes in a training script",
                "Six changes turn a one-device script into a data-parallel one. Each is shown with the scalelab\n"
                "source file and function where it happens.",
                horovod_changes});
  lab.add_step({"Train on N ranks",
                "The same training on N ranks launched through mpirun: each rank takes 1/N of every epoch, and\n"
                "gradients are averaged by allreduce every step. The global batch is N x 128.",
                n_ranks});
  lab.add_step({"Speed-up and scaling efficiency",
                "scalelab scale runs the same training at 1, 2, ... N ranks and prints the course's table:\n"
                "speed-up = images/sec(N) / images/sec(1), scaling efficiency = speed-up / N.",
                scaling_table});
  lab.add_step({"The accuracy gap of the larger global batch",
                "Throughput is not the whole story: after the same number of epochs, the larger global batch\n"
                "has taken fewer optimizer steps. Compare test accuracy at batch 128, N x 128 and 8 x 128.",
                accuracy_gap, /*timed=*/false});
  return scalelab::labs::lab_main(lab, argc, argv);
}
