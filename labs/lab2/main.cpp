// Lab 2: large-batch convergence. The course's second lesson, after Goyal et al. 2017: with N
// workers the global batch is N times larger, and after the same epochs the model is worse; linear
// learning-rate scaling with gradual warm-up recovers it, square-root scaling less so, and the
// layer-wise optimizers LARS and LAMB hold at a larger batch still. Every step runs a real
// `scalelab converge` configuration (the MLP on Fashion-MNIST, fixed seed); large global batches
// are made of emulated workers (accumulated micro-batches), so a 2-core laptop shows what 16 or 32
// GPUs would. Handout: docs/labs/lab2.md. Run: `lab2 --quick` (3 epochs) or `lab2` (5 epochs).
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "lab_main.h"

namespace {

using scalelab::lab::LabOptions;
using scalelab::lab::StepContext;
using Json = nlohmann::json;

// The lesson's settings (docs/convergence-results.md shows they hold over several seeds).
constexpr int kBaseBatch = 32;
constexpr int kScale = 16;            // the naive and scaled large batch: 512
constexpr int kLayerwiseScale = 32;   // LARS and LAMB: 1024
constexpr double kTargetAccuracy = 0.85;
constexpr double kAssumedEfficiency = 0.9;  // Lab 1's scaling-efficiency bar, for the prediction in step 8

int epochs(const LabOptions& o) { return o.quick ? 3 : 5; }

constexpr const char* kLr = "0.01";        // SGD at the baseline batch
constexpr const char* kDoubledLr = "0.02";  // steps 3 and 4 also try twice that: x16 = 0.32

std::vector<std::string> converge_args(const LabOptions& o, const std::string& configs, const std::string& json,
                                       const std::string& lr = kLr) {
  return {"converge", "--model", "mlp", "--optimizer", "sgd", "--dataset", o.dataset, "--epochs", std::to_string(epochs(o)),
          "--base-batch", std::to_string(kBaseBatch), "--scale", std::to_string(kScale), "--layerwise-scale",
          std::to_string(kLayerwiseScale), "--lr", lr, "--warmup-epochs", "1", "--lr-schedule", "cosine",
          "--target-accuracy", fmt::format("{}", kTargetAccuracy), "--seed", "42", "--configs", configs,
          "--charts", "", "--json", json};
}

// Runs `configs` and returns their records.
Json run_configs(StepContext& ctx, const std::string& configs, const std::string& file, const std::string& lr = kLr) {
  const Json doc = ctx.run(converge_args(ctx.options(), configs, ctx.out(file), lr), ctx.out(file));
  return doc.at("configurations");
}

double final_acc(const Json& r) { return r.at("final_test_accuracy").get<double>(); }
double baseline_acc(const StepContext& ctx) {
  return final_acc(ctx.earlier(ctx.out("baseline.json"), 1).at("configurations").at(0));
}
std::string points(double a, double b) { return fmt::format("{:+.2f} points", 100 * (a - b)); }

void report(StepContext& ctx, const Json& r) {
  const double acc = final_acc(r);
  ctx.note(r.at("name").get<std::string>() + "_test_accuracy", acc);
  ctx.say(fmt::format("{}: {}; test accuracy {:.2f}% after {} epochs ({} vs the baseline).", r.at("name").get<std::string>(),
                      r.at("description").get<std::string>(), 100 * acc, epochs(ctx.options()),
                      points(acc, baseline_acc(ctx))));
}

void baseline(StepContext& ctx) {
  const Json r = run_configs(ctx, "baseline", "baseline.json").at(0);
  ctx.note("baseline_test_accuracy", final_acc(r));
  ctx.say(fmt::format("\nBaseline: global batch {}, {} steps per epoch; test accuracy {:.2f}% after {} epochs.",
                      kBaseBatch, r.at("steps_per_epoch").get<long>(), 100 * final_acc(r), epochs(ctx.options())));
}

void naive(StepContext& ctx) {
  ctx.say(fmt::format("Question first: {} workers each keep the batch of {}, so the global batch is {} and an epoch has {}x "
                      "fewer steps, at the same lr. After the same {} epochs, how many points of test accuracy do you "
                      "expect to lose? Write your guess down, then read on.",
                      kScale, kBaseBatch, kBaseBatch * kScale, kScale, epochs(ctx.options())));
  const Json r = run_configs(ctx, "naive", "naive.json").at(0);
  report(ctx, r);
  ctx.say("Each step now averages 16 gradients instead of 1, a better estimate of the same gradient, but the lr is the "
          "same: the model moves 16 times less per epoch. Same epochs, same data, much less learning.");
}

void linear(StepContext& ctx) {
  const Json r = run_configs(ctx, "linear", "linear.json").at(0);
  report(ctx, r);
  const Json base = ctx.earlier(ctx.out("baseline.json"), 1).at("configurations").at(0);
  const Json& e1 = r.at("epochs").at(0);
  const Json& b1 = base.at("epochs").at(0);
  const double loss1 = e1.at("test_loss").get<double>();
  ctx.note("linear_epoch1_test_loss", loss1);
  ctx.say(fmt::format("After epoch 1: test loss {:.4f}, accuracy {:.2f}% (baseline {:.4f}, {:.2f}%). The linear rule (Goyal et "
                      "al.: lr = 0.1 x batch/256) sets lr {:g} from the very first step, while the weights are random and "
                      "the gradients large.",
                      loss1, 100 * e1.at("test_accuracy").get<double>(), b1.at("test_loss").get<double>(),
                      100 * b1.at("test_accuracy").get<double>(), r.at("peak_lr").get<double>()));
  if (final_acc(r) < 0.2) {
    ctx.say("The run diverged: accuracy at chance (10%) and a loss of ln 10 = 2.3026, the loss of a uniform guess. The "
            "first steps overshot so far that the ReLUs died or the weights blew up, and training never recovered.");
  } else {
    // The run held (it may have overshot in its first epoch): twice the lr shows where it breaks.
    ctx.say(loss1 > b1.at("test_loss").get<double>()
                ? "The first epoch is worse than the baseline's: the first steps overshoot, but the run recovers."
                : "This time the first steps did not overshoot badly.");
    ctx.say("Now the same with a baseline lr twice as large, 0.02 (the baseline trains as well at 0.02: "
            "docs/convergence-results.md), so x16 = 0.32:");
    const Json d = run_configs(ctx, "linear", "linear-lr0.02.json", kDoubledLr).at(0);
    ctx.note("linear_lr0.02_test_accuracy", final_acc(d));
    ctx.say(fmt::format("linear at lr {:g}: test accuracy {:.2f}%, test loss {:.4f}.", d.at("peak_lr").get<double>(),
                        100 * final_acc(d), d.at("final_test_loss").get<double>()));
    if (final_acc(d) < 0.2) {
      ctx.say("Diverged: accuracy at chance (10%) and a loss of ln 10 = 2.3026, a uniform guess. The first steps "
              "overshot so far that training never recovered. Step 4 runs the same lr with warm-up.");
    }
  }
}

void warmup(StepContext& ctx) {
  const Json r = run_configs(ctx, "linear-warmup", "linear-warmup.json").at(0);
  report(ctx, r);
  const Json d = run_configs(ctx, "linear-warmup", "linear-warmup-lr0.02.json", kDoubledLr).at(0);
  ctx.note("linear-warmup_lr0.02_test_accuracy", final_acc(d));
  // What the same peak lr did without warm-up in step 3 (not run there when lr 0.16 already diverged).
  std::string cold = "not run without warm-up in step 3";
  if (std::filesystem::exists(ctx.out("linear-lr0.02.json"))) {
    const Json c = ctx.earlier(ctx.out("linear-lr0.02.json"), 3).at("configurations").at(0);
    cold = final_acc(c) < 0.2 ? "which diverged without warm-up in step 3"
                              : fmt::format("which reached {:.2f}% without warm-up in step 3", 100 * final_acc(c));
  }
  ctx.say(fmt::format("With the doubled baseline lr (peak {:g}, {}): test accuracy {:.2f}%.", d.at("peak_lr").get<double>(), cold,
                      100 * final_acc(d)));
  ctx.say("Gradual warm-up raises the lr step by step from the baseline's lr to the scaled one over the first epoch "
          "(Horovod's LearningRateWarmupCallback does the same per epoch). The large batch now reaches the baseline's "
          "accuracy in the same epochs, with 16x fewer, larger steps.");
}

void sqrt_scaling(StepContext& ctx) {
  const Json r = run_configs(ctx, "sqrt", "sqrt.json").at(0);
  report(ctx, r);
  ctx.say(fmt::format("Square-root scaling multiplies the lr by sqrt({}) = {:.1f} instead of {}: safer, but with the same "
                      "epochs it under-trains (Goyal et al. saw 26.22% top-1 error against 23.74% for linear with warm-up).",
                      kScale, std::sqrt(double(kScale)), kScale));
}

void layerwise(StepContext& ctx) {
  const Json rs = run_configs(ctx, "lars,lamb", "layerwise.json");
  for (const auto& r : rs) report(ctx, r);
  ctx.say(fmt::format("At batch {} ({} workers) a single lr for every layer no longer fits: LARS and LAMB scale each layer's "
                      "step by a trust ratio ||w|| / ||update||, so no layer moves too far relative to its weights.",
                      kBaseBatch * kLayerwiseScale, kLayerwiseScale));
}

// Every configuration steps 1-6 ran, in the order they ran; step 3's run at lr 0.32 only when
// its run at 0.16 held (that is when step 3 runs it).
std::vector<std::string> run_files(const StepContext& ctx) {
  std::vector<std::string> files;
  for (const char* f : {"baseline.json", "naive.json", "linear.json", "linear-lr0.02.json", "linear-warmup.json",
                        "linear-warmup-lr0.02.json", "sqrt.json", "layerwise.json"}) {
    if (std::string(f) != "linear-lr0.02.json" || std::filesystem::exists(ctx.out(f))) files.push_back(ctx.out(f));
  }
  return files;
}

bool diverged(const Json& r) { return r.contains("diverged_at_epoch") && !r.at("diverged_at_epoch").is_null(); }

// "linear at lr 0.32": a configuration's name and peak lr, which tell apart the two runs of a name.
std::string run_name(const Json& r) { return fmt::format("{} at lr {:g}", r.at("name").get<std::string>(), r.at("peak_lr").get<double>()); }

void charts(StepContext& ctx) {
  const std::vector<std::string> files = run_files(ctx);
  std::string from;
  for (const auto& f : files) from += (from.empty() ? "" : ",") + f;
  (void)ctx.earlier(ctx.out("layerwise.json"), 6);
  (void)ctx.earlier(ctx.out("linear-warmup-lr0.02.json"), 4);
  ctx.run({"converge", "--from", from, "--charts", ctx.out("charts"), "--json", ctx.out("all.json")}, ctx.out("all.json"));
  ctx.note("charts", ctx.out("charts"));
  ctx.say("Open " + ctx.out("charts") + "/converge_accuracy_epoch.svg and converge_loss_epoch.svg.");
  // Read the curves rather than assume them: is the naive run below the baseline at every epoch?
  const Json all = ctx.earlier(ctx.out("all.json"), 7).at("configurations");
  const Json* base = nullptr;
  const Json* naive = nullptr;
  for (const auto& r : all) {
    if (r.at("name") == "baseline") base = &r;
    if (r.at("name") == "naive") naive = &r;
  }
  if (base != nullptr && naive != nullptr) {
    int below = 0;
    const auto& be = base->at("epochs");
    const auto& ne = naive->at("epochs");
    for (std::size_t i = 0; i < std::min(be.size(), ne.size()); ++i) {
      below += ne[i].at("test_accuracy").get<double>() < be[i].at("test_accuracy").get<double>();
    }
    ctx.note("naive_epochs_below_baseline", below);
    ctx.say(fmt::format("The naive large batch is below the baseline after {} of {} epochs: the gap opens in the first "
                        "epoch, when it has taken 16x fewer steps, and the same lr never lets it close. The warm-up run "
                        "starts lower (its lr is still climbing) and catches up by the end.",
                        below, be.size()));
  }
  Json gone = Json::array();
  for (const auto& r : all) {
    if (!diverged(r)) continue;
    gone.push_back(run_name(r));
    ctx.say(fmt::format("{} diverged at epoch {} (test accuracy {:.2f}%, loss {:.4f}): the charts draw it up to there, "
                        "marked \"diverged\", and the table says \"diverged\" where a run that learned too slowly says "
                        "\"never\".",
                        run_name(r), r.at("diverged_at_epoch").dump(), 100 * final_acc(r), r.at("final_test_loss").get<double>()));
  }
  ctx.note("diverged", gone);
}

// Warm-up at the lr where linear scaling alone diverged: the comparison that shows what warm-up is for.
void warmup_verdict(StepContext& ctx, const Json& all) {
  for (const auto& cold : all) {
    if (cold.at("name") != "linear" || !diverged(cold)) continue;
    for (const auto& warm : all) {
      if (warm.at("name") != "linear-warmup" || warm.at("peak_lr") != cold.at("peak_lr")) continue;
      const Json& ett = warm.at("epochs_to_target");
      ctx.say(fmt::format("At lr {:g}, linear scaling alone diverged at epoch {}; with warm-up the same lr trained to {:.2f}%{}. "
                          "At a safe lr warm-up can cost an epoch to the target (its lr is still climbing); at an "
                          "aggressive one it is what keeps the run alive.",
                          cold.at("peak_lr").get<double>(), cold.at("diverged_at_epoch").dump(), 100 * final_acc(warm),
                          ett.is_null() ? "" : fmt::format(", reaching {:.0f}% at epoch {}", 100 * kTargetAccuracy, ett.dump())));
      ctx.note("warmup_rescued_lr", cold.at("peak_lr"));
    }
  }
}

void time_to_accuracy(StepContext& ctx) {
  const Json all = ctx.earlier(ctx.out("all.json"), 7).at("configurations");
  (void)ctx.earlier(ctx.out("baseline.json"), 1);  // its epoch time: unreliable if measured on a busy machine
  double base_epoch_s = 0;
  for (const auto& r : all) {
    if (r.at("name") == "baseline") base_epoch_s = r.at("train_seconds").get<double>() / epochs(ctx.options());
  }
  ctx.say(fmt::format("Time to {:.0f}% test accuracy. Measured: epochs here. Predicted: on `workers` devices, an epoch takes the "
                      "baseline's epoch time here ({:.1f} s) / (workers x {:.0f}% scaling efficiency, Lab 1's bar), times the "
                      "epochs needed.",
                      100 * kTargetAccuracy, base_epoch_s, 100 * kAssumedEfficiency));
  for (const auto& r : all) {
    const std::string name = run_name(r);
    const std::string key = fmt::format("{}_lr{:g}", r.at("name").get<std::string>(), r.at("peak_lr").get<double>());
    const int workers = r.at("workers").get<int>();
    const Json& ett = r.at("epochs_to_target");
    if (diverged(r)) {
      ctx.say(fmt::format("  {:24} {:2} workers: diverged at epoch {}: it never reaches {:.0f}%, on any number of devices.",
                          name, workers, r.at("diverged_at_epoch").dump(), 100 * kTargetAccuracy));
      ctx.note(key + "_predicted_seconds_to_target", nullptr);
      continue;
    }
    if (ett.is_null()) {
      ctx.say(fmt::format("  {:24} {:2} workers: never reached {:.0f}% in {} epochs: {}x the images/sec buys nothing.", name,
                          workers, 100 * kTargetAccuracy, epochs(ctx.options()), workers));
      ctx.note(key + "_predicted_seconds_to_target", nullptr);
      continue;
    }
    const double efficiency = workers == 1 ? 1.0 : kAssumedEfficiency;
    const double predicted = ett.get<double>() * base_epoch_s / (workers * efficiency);
    ctx.note(key + "_predicted_seconds_to_target", predicted);
    ctx.say(fmt::format("  {:24} {:2} workers: {} epoch(s); predicted {:.2f} s on {} devices", name, workers, ett.get<int>(),
                        predicted, workers));
  }
  warmup_verdict(ctx, all);
  ctx.say("Lab 1 measured images/sec. What a user pays for is the time to a model that is good enough: a larger global "
          "batch only shortens it if the recipe (lr scaling, warm-up, LARS/LAMB) keeps the epochs needed from growing.");
}

}  // namespace

// Steps 1-6 teach test accuracy, which the machine's load cannot change (lab::Step::timed).
constexpr bool kAccuracyLesson = false;

int main(int argc, char** argv) {
  scalelab::lab::Lab lab("lab2", "Large-batch convergence: lr scaling, warm-up, LARS and LAMB");
  lab.uses({"dataset"});  // one process emulates the workers: no --ranks
  lab.add_step({"The baseline: a small global batch",
                "One worker, global batch 32, SGD with momentum 0.9, lr 0.01 decayed by a cosine: the reference every "
                "later step is measured against.",
                baseline, kAccuracyLesson});
  lab.add_step({"16 workers, the same lr: the naive large batch",
                "16 emulated workers x batch 32 = global batch 512 (each step accumulates 16 micro-batches, exactly as "
                "16 ranks would average their gradients). Same epochs, same lr.",
                naive, kAccuracyLesson});
  lab.add_step({"Linear scaling alone",
                "The same batch of 512 with the lr multiplied by 16 (0.16), from the first step; then, if that held, "
                "with a baseline lr of 0.02 (x16 = 0.32).",
                linear, kAccuracyLesson});
  lab.add_step({"Linear scaling with gradual warm-up",
                "The lr climbs linearly, step by step, from 0.01 to 0.16 over the first epoch, then follows the cosine; "
                "then the same from 0.02 to 0.32.",
                warmup, kAccuracyLesson});
  lab.add_step({"Square-root scaling", "The lr multiplied by sqrt(16) = 4, with the same warm-up.", sqrt_scaling, kAccuracyLesson});
  lab.add_step({"LARS and LAMB at a larger batch still",
                "32 workers: global batch 1024. LARS (SGD with per-layer trust ratios) and LAMB (Adam's moments with "
                "per-layer trust ratios), each with a one-epoch warm-up.",
                layerwise, kAccuracyLesson});
  lab.add_step({"The charts side by side", "Every configuration's test accuracy and loss against epoch and time.", charts});
  lab.add_step({"What this means for Lab 1's throughput",
                "Time to a target accuracy, not images per second, is what a faster cluster must deliver.",
                time_to_accuracy});
  return scalelab::labs::lab_main(lab, argc, argv);
}
