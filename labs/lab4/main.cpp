// Lab 4: when the data, not the model, sets the pace. Following NVIDIA's input-pipeline lab on
// this machine: a JPEG data set is made, its input pipeline measured alone (reader threads, fast
// against accurate JPEG decoding, simple against complex augmentation), then every lab model is
// trained on it with the pipeline and without it (`--synthetic-data`): a model faster than its
// pipeline waits for its data. Last, the step simulator takes the same question to 4 V100 of a
// DGX-1 and to a DGX H100, with the host-to-device arithmetic of the course.
// Handout: docs/labs/lab4.md. Run: `lab4 --quick` or `lab4`.
#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/error.h"
#include "core/results.h"
#include "core/stats.h"
#include "lab_main.h"
#include "report/chart.h"

namespace {

using scalelab::lab::StepContext;
using Json = nlohmann::json;

constexpr int kSize = 64;   // JPEG width and height: Fashion-MNIST upsampled, in colour
constexpr int kCrop = 56;   // the models' input: a random 56x56 crop (7/8 of the image)
constexpr int kBatch = 64;  // per rank
const std::vector<std::string> kModels{"trivial", "mlp", "cnn", "resnet"};

std::string set_dir(const StepContext& ctx) { return ctx.out("fm-jpeg"); }

// How long each training run is: the trivial model takes a step in microseconds, so an epoch of
// it lasts a fraction of a second; it trains 6 whole epochs and the lab takes the median epoch
// (one short epoch's rate varied by a third from run to run). The others train 40 or 120 steps.
std::vector<std::string> run_length(const StepContext& ctx, const std::string& model) {
  if (model == "trivial") return {"--epochs", "6"};
  return {"--max-steps", ctx.options().quick ? "40" : "120"};
}

// The images/s of a training record: its one epoch, or the median of its epochs after the first.
double train_rate(const Json& doc) {
  const Json& epochs = doc.at("epochs");
  std::vector<double> r;
  for (std::size_t e = epochs.size() > 1 ? 1 : 0; e < epochs.size(); ++e) r.push_back(epochs[e].at("images_per_second").get<double>());
  return scalelab::median(std::move(r));
}

void make_set(StepContext& ctx) {
  const std::string train_n = ctx.options().quick ? "4000" : "12000";
  ctx.run({"data", "make-jpeg", "--from", "fashion-mnist", "--size", std::to_string(kSize), "--colour", "--limit", train_n, "--out",
           set_dir(ctx)});
  ctx.run({"data", "make-jpeg", "--from", "fashion-mnist", "--split", "test", "--size", std::to_string(kSize), "--colour",
           "--limit", "1000", "--out", set_dir(ctx) + "/test"});
  ctx.say(fmt::format("\nEvery image is now a small colour JPEG ({0}x{0}, quality 90): reading it costs little, decoding\n"
                      "and augmenting it costs CPU time on every sample of every epoch.",
                      kSize));
}

const Json* pipeline_row(const Json& doc, int workers, const std::string& augment, const std::string& decode) {
  for (const Json& r : doc.at("rows")) {
    if (r.at("workers").get<int>() == workers && r.at("augment") == augment && r.at("decode") == decode) return &r;
  }
  return nullptr;
}

void pipeline_alone(StepContext& ctx) {
  const std::string f = ctx.out("pipeline.json");
  const Json doc = ctx.run({"pipeline", "--dataset", "jpeg:" + set_dir(ctx), "--workers", "1,2", "--augment", "simple,complex",
                            "--decode", "accurate,fast", "--batch-size", std::to_string(kBatch), "--crop", std::to_string(kCrop),
                            "--images", ctx.options().quick ? "8192" : "32768", "--json", f},
                           f);
  auto rate = [&](int w, const char* a, const char* d) {
    const Json* r = pipeline_row(doc, w, a, d);
    return r ? r->at("images_per_s").get<double>() : 0.0;
  };
  const double base = rate(1, "simple", "accurate");
  const Json findings = {{"two_workers_over_one", rate(2, "simple", "accurate") / base},
                         {"fast_over_accurate", rate(1, "simple", "fast") / base},
                         {"complex_over_simple", rate(1, "complex", "accurate") / base}};
  ctx.note("ratios", findings);
  ctx.say(fmt::format("\nAgainst 1 worker, simple augmentation, accurate IDCT ({:.0f} images/s):\n"
                      "  2 workers            x{:.2f}\n  fast IDCT            x{:.2f}\n  complex augmentation x{:.2f}",
                      base, findings["two_workers_over_one"].get<double>(), findings["fast_over_accurate"].get<double>(),
                      findings["complex_over_simple"].get<double>()));
  ctx.say("Question: which of the three changes buys the most, and why does the second worker not give\n"
          "exactly twice as much on this machine?");
}

// Step 2's record (the pipeline alone), or null when step 2 has not run in this output folder, or
// its file is not step 2's of this run (checked as every step reads an earlier one's:
// StepContext::earlier), which the step then says.
Json pipeline_alone_record(const StepContext& ctx) {
  const std::string f = ctx.out("pipeline.json");
  if (!std::filesystem::exists(f)) return nullptr;
  try {
    return ctx.earlier(f, 2);
  } catch (const scalelab::Error& e) {
    ctx.say(std::string("(the pipeline alone is left out of the charts: ") + e.what() + ")");
    return nullptr;
  }
}

// Its rate (simple augmentation, accurate IDCT) at `workers`, or 0 without it.
double pipeline_alone_rate(const Json& doc, int workers) {
  if (doc.is_null()) return 0;
  const Json* r = pipeline_row(doc, workers, "simple", "accurate");
  return r ? r->at("images_per_s").get<double>() : 0.0;
}

// One chart per model: against loader threads, the pipeline alone (step 2), the model alone
// (synthetic data), the slower of the two (what training can reach) and training on the JPEGs.
void model_chart(StepContext& ctx, const std::string& model, const Json& row) {
  namespace report = scalelab::report;
  report::Chart chart;
  chart.title = fmt::format("{}: training runs at the pace of the slower of its pipeline and its compute", model);
  chart.x_label = "loader threads";
  chart.y_label = "images/s";
  chart.log_y = true;
  chart.y_format = "%.0f";
  chart.x_tics = {1, 2};
  report::Series pipeline{.label = "input pipeline alone (step 2)", .points = {}};
  report::Series compute{.label = "model alone (synthetic data)", .points = {}};
  report::Series bound{.label = "the slower of the two", .points = {}, .color = "#999999", .dashtype = 2, .pointtype = 6};
  report::Series real{.label = "training on the JPEGs", .points = {}};
  for (const Json& p : row.at("by_loader_threads")) {
    const double t = p.at("loader_threads").get<double>();
    const double synthetic = row.at("synthetic").get<double>();
    const double alone = p.at("pipeline_alone").get<double>();
    compute.points.emplace_back(t, synthetic);
    if (alone > 0) {
      pipeline.points.emplace_back(t, alone);
      bound.points.emplace_back(t, std::min(alone, synthetic));
    }
    real.points.emplace_back(t, p.at("real").get<double>());
  }
  if (!pipeline.points.empty()) chart.series.push_back(pipeline);
  chart.series.push_back(compute);
  if (!bound.points.empty()) chart.series.push_back(bound);
  chart.series.push_back(real);
  try {
    const auto files = report::write_chart(chart, ctx.out("chart-" + model));
    ctx.say("  chart: " + files.svg);
  } catch (const std::exception& e) {
    ctx.say(std::string("  (no chart: ") + e.what() + ")");
  }
}

void real_against_synthetic(StepContext& ctx) {
  auto train = [&](const std::string& model, const std::string& what, std::vector<std::string> extra) {
    const std::string f = ctx.out(fmt::format("{}-{}.json", model, what));
    std::vector<std::string> args{"train", "--dataset", "jpeg:" + set_dir(ctx), "--model", model, "--crop", std::to_string(kCrop),
                                  "--batch-size", std::to_string(kBatch), "--no-eval", "--json", f};
    const std::vector<std::string> length = run_length(ctx, model);
    args.insert(args.end(), length.begin(), length.end());
    args.insert(args.end(), extra.begin(), extra.end());
    const Json doc = ctx.run(args, f);
    double wait = 0, seconds = 0;
    for (const Json& e : doc.at("epochs")) {
      wait += e.at("data_wait_seconds").get<double>();
      seconds += e.at("seconds").get<double>();
    }
    return std::make_pair(train_rate(doc), seconds > 0 ? wait / seconds : 0.0);
  };
  const Json alone = pipeline_alone_record(ctx);
  Json table = Json::array();
  for (const std::string& m : kModels) {
    const double synthetic = train(m, "synthetic", {"--synthetic-data"}).first;
    Json by_threads = Json::array();
    for (const int threads : {1, 2}) {
      const auto [rate, wait_share] = train(m, threads == 1 ? "real" : "real-2-threads", {"--loader-workers", std::to_string(threads)});
      by_threads.push_back({{"loader_threads", threads},
                            {"real", rate},
                            {"data_wait_share", wait_share},
                            {"pipeline_alone", pipeline_alone_rate(alone, threads)}});
    }
    const Json& one = by_threads.at(0);
    table.push_back({{"model", m},
                     {"real", one.at("real")},
                     {"synthetic", synthetic},
                     {"ratio", one.at("real").get<double>() / synthetic},
                     {"data_wait_share", one.at("data_wait_share")},
                     {"by_loader_threads", by_threads}});
  }
  ctx.say("\n  model     real JPEGs   synthetic   real/synthetic   waiting for data   real, 2 loader threads");
  for (const Json& r : table) {
    ctx.say(fmt::format("  {:<8} {:>11.0f} {:>11.0f} {:>16.2f} {:>17.0f}% {:>24.0f}", r.at("model").get<std::string>(),
                        r.at("real").get<double>(), r.at("synthetic").get<double>(), r.at("ratio").get<double>(),
                        100 * r.at("data_wait_share").get<double>(), r.at("by_loader_threads").at(1).at("real").get<double>()));
  }
  ctx.note("models", table);
  for (const Json& r : table) model_chart(ctx, r.at("model").get<std::string>(), r);
  ctx.say("The DLI lab's table on 4 V100 (docs/references.md, Course figures): AlexNet 26,791 synthetic against 3,250 real\n"
          "images/s, ResNet-50 2,796 against 2,741. Question: which of the lab models here is the AlexNet of\n"
          "that table, and which the ResNet-50? What would a faster model do to the ratio? In each model's chart,\n"
          "how close does training on the JPEGs come to the slower of its pipeline and its compute, and why\n"
          "does a second loader thread help one model and cost another?");
}

void more_workers(StepContext& ctx) {
  Json out = Json::array();
  struct Case {
    const char* what;
    std::vector<std::string> args;
  };
  const std::vector<Case> cases{{"1 loader thread, simple augmentation", {"--loader-workers", "1"}},
                                {"2 loader threads, simple augmentation", {"--loader-workers", "2"}},
                                {"2 loader threads, fast IDCT", {"--loader-workers", "2", "--decode", "fast"}},
                                {"2 loader threads, complex augmentation", {"--loader-workers", "2", "--augment", "complex"}}};
  int i = 0;
  for (const Case& c : cases) {
    const std::string f = ctx.out(fmt::format("trivial-loader-{}.json", i++));
    std::vector<std::string> args{"train", "--dataset", "jpeg:" + set_dir(ctx), "--model", "trivial", "--crop", std::to_string(kCrop),
                                  "--batch-size", std::to_string(kBatch), "--no-eval", "--json", f};
    const std::vector<std::string> length = run_length(ctx, "trivial");
    args.insert(args.end(), length.begin(), length.end());
    args.insert(args.end(), c.args.begin(), c.args.end());
    const Json doc = ctx.run(args, f);
    const double ips = train_rate(doc);
    out.push_back({{"what", c.what}, {"images_per_s", ips}});
    ctx.say(fmt::format("  {:<40} {:>9.0f} images/s", c.what, ips));
  }
  ctx.note("trivial", out);
  ctx.say("Question: the trivial model trains in almost no time; what limits the second loader thread on a\n"
          "2-core machine where the training thread also wants a core?");
}

void course_gpus(StepContext& ctx) {
  struct Case {
    const char* workload;
    const char* machine;
    const char* gpus;
    const char* batch;
  };
  const std::vector<Case> cases{{"alexnet", "dgx1", "4", "64"},   {"googlenet", "dgx1", "4", "64"}, {"resnet50", "dgx1", "4", "64"},
                                {"resnet152", "dgx1", "4", "64"}, {"resnet50", "dgx-h100", "8", "256"}};
  Json out = Json::array();
  int i = 0;
  ctx.say("  workload    machine    GPUs   data on the GPUs   JPEGs decoded on the host   real/synthetic");
  for (const Case& c : cases) {
    double rates[2] = {0, 0};
    Json real;
    for (int synthetic = 0; synthetic < 2; ++synthetic) {
      const std::string f = ctx.out(fmt::format("sim-{}-{}.json", i, synthetic ? "synthetic" : "real"));
      std::vector<std::string> args{"simulate", "--workload", c.workload, "--machine", c.machine, "--gpus", c.gpus,
                                    "--batch-size", c.batch, "--precision", "amp", "--json", f};
      if (synthetic) args.insert(args.end(), {"--decode-rate", "0"});
      const Json doc = ctx.run(args, f);
      rates[synthetic] = doc.at("rows").back().at("images_per_s").get<double>();
      if (!synthetic) real = doc;
    }
    ++i;
    const double params = real.at("workload").at("parameters").get<double>();
    const double per_gpu = rates[0] / std::stod(c.gpus);
    const double input_MBps = per_gpu * 224 * 224 * 3 / 1e6;  // decoded uint8 images to each GPU
    const double grad_MBps = per_gpu / std::stod(c.batch) * params * 4 / 1e6;
    out.push_back({{"workload", c.workload}, {"machine", c.machine}, {"gpus", std::stoi(c.gpus)}, {"synthetic", rates[1]},
                   {"real", rates[0]}, {"ratio", rates[0] / rates[1]}, {"input_MBps_per_gpu", input_MBps},
                   {"gradient_MBps_per_gpu", grad_MBps}, {"gradient_MB", params * 4 / 1e6}});
    ctx.say(fmt::format("  {:<11} {:<10} {:>4} {:>18.0f} {:>27.0f} {:>16.2f}", c.workload, c.machine, c.gpus, rates[1], rates[0],
                        rates[0] / rates[1]));
  }
  ctx.note("simulated", out);
  for (const Json& r : out) {
    if (r.at("workload") != "resnet50" || r.at("machine") != "dgx1") continue;
    ctx.say(fmt::format("\nThe PCIe arithmetic for ResNet-50 on a DGX-1 V100: {:.1f} MB of float32 gradients per step ({:.0f} MB/s\n"
                        "per GPU at the predicted rate, each way), and {:.0f} MB/s of decoded 224x224 images per GPU, against\n"
                        "about 12,000 MB/s that a PCIe Gen3 x16 link copies (the course measured 11.8 GB/s).",
                        r.at("gradient_MB").get<double>(), r.at("gradient_MBps_per_gpu").get<double>(),
                        r.at("input_MBps_per_gpu").get<double>()));
  }
  ctx.say("The simulator prices host decoding at 80 full-size images/s per core, the node's cores shared by its\n"
          "GPUs (docs/simulator.md). Question: which workloads are held back by the host on 4 V100, and what\n"
          "changes on the H100 node, whose GPUs are several times faster? What do GPU decoding (DALI, nvJPEG)\n"
          "and FFCV's small JPEGs buy?");
}

}  // namespace

int main(int argc, char** argv) {
  scalelab::lab::Lab lab("lab4", "When the data, not the model, sets the pace: the input pipeline");
  lab.uses({});  // one rank throughout: the pipeline's threads share this machine's cores with training
  lab.add_step({"Make a JPEG data set",
                "Fashion-MNIST as colour JPEGs, a training set and its test set, as a real input pipeline reads them.",
                make_set, /*timed=*/false});
  lab.add_step({"The input pipeline alone",
                "Read, decode and augment, with no model at all: 1 or 2 worker threads, accurate or fast JPEG decoding, "
                "simple or complex augmentation.",
                pipeline_alone});
  lab.add_step({"Real data against synthetic data, model by model",
                "Each lab model trained on the JPEGs through its loader, then on one batch prepared once "
                "(--synthetic-data): what the model alone could do.",
                real_against_synthetic});
  lab.add_step({"A pipeline-bound model: more loader threads, cheaper decoding, heavier augmentation",
                "The trivial model waits for its data: which change to the pipeline moves it?", more_workers});
  lab.add_step({"The same question on the course's GPUs",
                "The step simulator with JPEGs decoded on the host's cores, and with the data already on the GPUs.",
                course_gpus, /*timed=*/false});
  return scalelab::labs::lab_main(lab, argc, argv);
}
