// Lab 5: will it scale? The step simulator predicts `scalelab train` on this machine, the lab
// measures it, and the two are compared; then the same simulator takes the course's workloads
// to machines the class does not have (DGX-1, DGX A100, DGX H100, Puhti, LUMI-G): the scaling
// curve, where it bends and why (compute- or communication-bound, bucket size, gradient wire
// precision, batch per GPU), the bootcamp's NVLink pair against a pair through host memory, and
// the Puhti run as the sbatch script that would submit it.
// Handout: docs/labs/lab5.md. Run: `lab5 --quick` (a few minutes) or `lab5`.
#include <cmath>
#include <fstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "lab_main.h"

namespace {

using scalelab::lab::StepContext;
using Json = nlohmann::json;

constexpr int kBatch = 128;  // per rank, as Lab 1

std::string profile(const StepContext& ctx) { return ctx.out("profile.json"); }

// The simulate record's row for `gpus` ranks, else its last (file: for the error if it has none).
const Json& row_at(const Json& doc, int gpus, const std::string& file) {
  const Json& last = StepContext::last_of(doc, "rows", file);
  for (const Json& r : doc.at("rows")) {
    if (r.at("gpus").get<int>() == gpus) return r;
  }
  return last;
}

void calibrate(StepContext& ctx) {
  // --force: the profile stays in the lab's folder, and a busy machine marks this step unreliable
  // (its JSON's load verdict) instead of stopping the lab.
  std::vector<std::string> args{"calibrate", "--profile", profile(ctx), "--force", "--json", ctx.out("calibration.json")};
  if (ctx.options().quick) args.push_back("--quick");
  ctx.run(args, ctx.out("calibration.json"));
  ctx.say("\nThe profile holds the collective costs (Lab 3) and the nn engine's own kernel rates per layer\n"
          "kind: what one thread of this CPU computes, measured with the kernels `scalelab train` runs.");
}

void predict_here(StepContext& ctx) {
  (void)ctx.earlier(ctx.out("calibration.json"), 1);  // a profile measured on a busy machine predicts the busy machine
  const std::string f = ctx.out("predict-this.json");
  const std::string ranks = fmt::format("1,{}", ctx.options().ranks);
  const Json doc = ctx.run({"simulate", "--workload", "cnn", "--machine", "this", "--gpus", ranks, "--batch-size",
                            std::to_string(kBatch), "--optimizer", "adam", "--profile", profile(ctx), "--json", f},
                           f);
  const Json& one = row_at(doc, 1, f);
  const Json& many = row_at(doc, ctx.options().ranks, f);
  ctx.note("predicted", {{"one_rank", one.at("images_per_s")}, {"ranks", many.at("images_per_s")},
                         {"efficiency", many.at("scaling_efficiency")}});
  ctx.say(fmt::format("\nPredicted: {:.0f} images/s on 1 rank, {:.0f} on {}, scaling efficiency {:.1f}%.",
                      one.at("images_per_s").get<double>(), many.at("images_per_s").get<double>(), ctx.options().ranks,
                      100 * many.at("scaling_efficiency").get<double>()));
  ctx.say("Question: which part of the step does the model say grows with the ranks, and by how much?");
}

void measure_here(StepContext& ctx) {
  const std::string f = ctx.out("measured-this.json");
  const int steps = ctx.options().quick ? 40 : 150;
  const Json doc = ctx.run({"scale", "--rank-counts", fmt::format("1,{}", ctx.options().ranks), "--out", ctx.out("scale"),
                            "--json", f, "--model", "cnn", "--dataset", ctx.options().dataset, "--batch-size",
                            std::to_string(kBatch), "--threads", "1", "--no-eval", "--max-steps", std::to_string(steps)},
                           f);
  const Json predicted = ctx.earlier(ctx.out("predict-this.json"), 2);
  (void)ctx.earlier(ctx.out("calibration.json"), 1);
  Json comparison = Json::array();
  const Json& rows = doc.at("rows");
  for (const Json& r : rows) {
    const int ranks = r.at("ranks").get<int>();
    const double measured = r.at("images_per_second").get<double>();
    const double pred = row_at(predicted, ranks, ctx.out("predict-this.json")).at("images_per_s").get<double>();
    const double err = 100.0 * (pred - measured) / measured;
    comparison.push_back({{"ranks", ranks}, {"measured", measured}, {"predicted", pred}, {"error_pct", err}});
    ctx.say(fmt::format("  {} rank{}: measured {:7.0f} images/s, predicted {:7.0f} ({:+.1f}%)", ranks, ranks == 1 ? " " : "s",
                        measured, pred, err));
  }
  const double eff_measured = 100 * StepContext::last_of(doc, "rows", f).at("efficiency").get<double>();
  const double eff_predicted = 100 * row_at(predicted, ctx.options().ranks, ctx.out("predict-this.json")).at("scaling_efficiency").get<double>();
  ctx.say(fmt::format("  scaling efficiency: measured {:.1f}%, predicted {:.1f}% ({:+.1f} points); load average {:.2f}",
                      eff_measured, eff_predicted, eff_predicted - eff_measured,
                      rows.back().at("load_average").get<double>()));
  ctx.note("comparison", comparison);
  ctx.note("efficiency_points", eff_predicted - eff_measured);
  ctx.say("The model's target on a quiet machine: images/s within 15%, efficiency within 5 points.\n"
          "Question: what does the model leave out that the measurement includes (docs/simulator.md)?");
}

struct MachineCase {
  const char* machine;
  const char* gpus;
  const char* precision;
  const char* batch;
};

void course_machines(StepContext& ctx) {
  const MachineCase cases[] = {
      {"dgx1", "1,2,4,8", "fp32", "64"},           {"dgx-a100", "1,2,4,8", "tf32", "128"},
      {"dgx-h100", "1,2,4,8", "amp", "256"},        {"puhti", "1,4,8,16,32,64", "fp32", "64"},
      {"lumi-g", "1,8,16,64,256", "amp", "128"},
  };
  Json summary = Json::array();
  int i = 0;
  for (const MachineCase& c : cases) {
    const std::string f = ctx.out(fmt::format("resnet50-{}.json", i++));
    // Data already on the GPUs (--decode-rate 0), as GPU-only benchmarks measure: the scaling of
    // the step itself. With JPEGs decoded on the host's cores the pipeline would set the pace.
    const Json doc = ctx.run({"simulate", "--workload", "resnet50", "--machine", c.machine, "--gpus", c.gpus,
                              "--precision", c.precision, "--batch-size", c.batch, "--decode-rate", "0", "--json", f},
                             f);
    const Json& last = doc.at("rows").back();
    summary.push_back({{"machine", c.machine}, {"gpus", last.at("gpus")}, {"images_per_s", last.at("images_per_s")},
                       {"efficiency", last.at("scaling_efficiency")}, {"bottleneck", last.at("bottleneck")}});
    ctx.say(fmt::format("  {:<9} {:>4} GPUs {:>9.0f} images/s  {:5.1f}%  {}", c.machine, last.at("gpus").get<int>(),
                        last.at("images_per_s").get<double>(), 100 * last.at("scaling_efficiency").get<double>(),
                        last.at("bottleneck").get<std::string>()));
  }
  ctx.note("resnet50", summary);
  ctx.say("Question: on which machine does the curve bend first, and is it the link or the computation\n"
          "that changed between the GPU generations?");
}

void knobs(StepContext& ctx) {
  struct Knob {
    const char* what;
    std::vector<std::string> args;
  };
  const std::vector<Knob> knobs = {
      {"buckets of 64 MiB (the default)", {"--batch-size", "64"}},
      {"one allreduce per tensor", {"--batch-size", "64", "--bucket-cap", "0"}},
      {"one 1 GiB bucket: nothing overlaps backward", {"--batch-size", "64", "--bucket-cap", "1G"}},
      {"float16 gradients on the wire", {"--batch-size", "64", "--fp16-allreduce"}},
      {"batch 16 per GPU", {"--batch-size", "16"}},
      {"batch 128 per GPU", {"--batch-size", "128"}},
  };
  Json out = Json::array();
  int i = 0;
  for (const Knob& k : knobs) {
    const std::string f = ctx.out(fmt::format("knob-{}.json", i++));
    std::vector<std::string> args{"simulate", "--workload", "resnet50", "--machine", "puhti", "--gpus", "4,64",
                                  "--decode-rate", "0", "--json", f};
    args.insert(args.end(), k.args.begin(), k.args.end());
    const Json doc = ctx.run(args, f);
    const Json& r = doc.at("rows").back();
    out.push_back({{"what", k.what}, {"efficiency", r.at("scaling_efficiency")}, {"exposed_comm_s", r.at("exposed_comm_s")},
                   {"step_s", r.at("step_s")}});
    ctx.say(fmt::format("  {:<44} 64 GPUs: step {:6.1f} ms, exposed allreduce {:5.1f} ms, efficiency vs 4 GPUs {:5.1f}%",
                        k.what, 1e3 * r.at("step_s").get<double>(), 1e3 * r.at("exposed_comm_s").get<double>(),
                        100 * r.at("scaling_efficiency").get<double>()));
  }
  ctx.note("knobs", out);
  ctx.say("Question: which bucket size leaves the least allreduce after backward ends, and what does each\n"
          "allreduce pay besides its bytes? Why does a larger batch per GPU raise the efficiency without\n"
          "changing a single byte of the allreduce?");
}

void nvlink_pair(StepContext& ctx) {
  Json out;
  for (const std::string p2p : {"on", "off"}) {
    const std::string f = ctx.out("cnn-pair-p2p-" + p2p + ".json");
    const Json doc = ctx.run({"simulate", "--workload", "cnn", "--machine", "dgx1", "--gpus", "1,2", "--batch-size", "2048",
                              "--p2p", p2p, "--json", f},
                             f);
    const Json& r = doc.at("rows").back();
    out[p2p] = {{"images_per_s", r.at("images_per_s")}, {"exposed_comm_s", r.at("exposed_comm_s")}};
    ctx.say(fmt::format("  two V100, P2P {:<3} ({}): {:8.0f} images/s, exposed allreduce {:.2f} ms", p2p,
                        p2p == "on" ? "NVLink" : "host memory", r.at("images_per_s").get<double>(),
                        1e3 * r.at("exposed_comm_s").get<double>()));
  }
  ctx.note("pair", out);
  ctx.say("The bootcamp measured about 100k images/s on an NVLink pair and 96-99k through PCIe and the\n"
          "host (docs/references.md). Question: the pair's link (`scalelab topo --machine dgx1`) is several\n"
          "times faster than the path through host memory; why does that change the throughput by only a\n"
          "few percent?");
}

// The 64-GPU Puhti run of step 5 as the job a student would submit: `scalelab slurm` picks the
// partition from the size and time and writes each directive with its reason.
void puhti_job(StepContext& ctx) {
  const std::string script = ctx.out("puhti-resnet.sh");
  ctx.run({"slurm", "--cluster", "puhti", "--nodes", "16", "--time", "02:00:00", "--account", "project_2001234", "--out", script,
           "--", "train", "--model", "resnet", "--epochs", "5", "--batch-size", "64"});
  std::ifstream in(script);
  std::string line;
  Json directives = Json::array();
  while (std::getline(in, line)) {
    if (line.rfind("#SBATCH", 0) == 0 || line.rfind("srun", 0) == 0) {
      ctx.say("  " + line);
      directives.push_back(line);
    }
  }
  if (directives.empty()) scalelab::throw_runtime("step " + std::to_string(ctx.number()) + ": " + script + " holds no #SBATCH line");
  ctx.note("puhti_job", {{"script", script}, {"lines", directives}});
  ctx.say("Question: why did it choose the gpu partition and not gputest, and what would change (partition,\n"
          "cores, memory) for 2 GPUs for 10 minutes? Try `scalelab slurm --cluster lumi-g --dry-run ...`:\n"
          "what does LUMI ask for that Puhti does not, and why (docs/clusters.md)?");
}

}  // namespace

int main(int argc, char** argv) {
  scalelab::lab::Lab lab("lab5", "Will it scale? Predict the step, measure it, then take it to other machines");
  lab.add_step({"Calibrate this machine",
                "The simulator needs this machine's figures: what its ranks pay to exchange bytes, and what the nn "
                "engine's kernels compute per second on one thread.",
                calibrate});
  lab.add_step({"Predict `scalelab train` here",
                "The step model prices every layer of the cnn, then the gradient allreduce, then the optimizer.",
                predict_here});
  lab.add_step({"Measure, and compare with the prediction",
                "scalelab scale trains the same model at the same rank counts and batch.", measure_here});
  lab.add_step({"ResNet-50 on the course's machines",
                "The same simulator on machines the class does not have: where does the scaling curve bend?",
                course_machines});
  lab.add_step({"Bucket size, gradient precision and batch per GPU on a cluster",
                "Puhti's nodes talk over InfiniBand: how much of the allreduce can backward hide?", knobs});
  lab.add_step({"The bootcamp's NVLink pair against a pair through host memory",
                "The Fashion-MNIST CNN on two V100s of a DGX-1, peer-to-peer on and off.", nvlink_pair});
  lab.add_step({"From the prediction to a job on Puhti",
                "Step 5's 64 GPUs as the sbatch script a student would submit: 16 nodes of 4 V100.", puhti_job,
                /*timed=*/false});
  return scalelab::labs::lab_main(lab, argc, argv);
}
