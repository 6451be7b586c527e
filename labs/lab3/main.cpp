// Lab 3: the links decide. A cost model predicts allreduce over NVLink, NVSwitch, PCIe, the
// socket link and InfiniBand on machines the student does not have; then, on the machine at
// hand, the same model is calibrated, predicts, and is checked against the real benchmark.
// Steps: this machine's topology; DGX-1's topology with its best and worst GPU pair and an
// 8-GPU ring; predicted busbw against size on DGX-1, DGX A100 and a PCIe server, P2P on and off;
// calibrate, predict, measure and compare here; what ResNet-50's 97 MB gradient exchange needs
// from each link; a chart of predicted and measured busbw.
// Handout: docs/labs/lab3.md. Run: `lab3 --quick` (a few minutes) or `lab3`.
#include <algorithm>
#include <array>
#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "lab_main.h"
#include "report/chart.h"

namespace {

using scalelab::lab::StepContext;
using Json = nlohmann::json;

// ResNet-50: 25,610,216 float32 parameters (docs/references.md, Course figures): the gradient every step exchanges.
constexpr double kResnet50Bytes = 25610216.0 * 4;
constexpr double kBatchPerGpu = 64;

std::string sizes_max(const StepContext& ctx) { return ctx.options().quick ? "16M" : "64M"; }

void this_topology(StepContext& ctx) {
  const Json t = ctx.run({"topo", "--json", ctx.out("this-topo.json")}, ctx.out("this-topo.json"));
  ctx.note("gpus", t.at("gpus"));
  ctx.say(t.at("gpus").empty()
              ? "\nNo GPUs here: the ranks are CPU processes and their 'link' is shared memory, which the\n"
                "model cannot read from a table; step 4 measures it."
              : "\nCompare the matrix with `nvidia-smi topo -m` on this machine.");
  ctx.say("Question: on a two-socket server, which pairs of cores would you expect to talk fastest?");
}

void dgx1(StepContext& ctx) {
  const Json t = ctx.run({"topo", "--machine", "dgx1", "--json", ctx.out("dgx1-topo.json")}, ctx.out("dgx1-topo.json"));
  const auto& routes = t.at("routes");
  const auto by_copy = [](const Json& a, const Json& b) { return a.at("copy_GBps").get<double>() < b.at("copy_GBps").get<double>(); };
  const Json best = *std::max_element(routes.begin(), routes.end(), by_copy);
  const Json worst = *std::min_element(routes.begin(), routes.end(), by_copy);
  const auto pos = [](const Json& id) { return id.get<std::string>().substr(3); };
  Json pair_busbw;
  for (const Json* r : {&best, &worst}) {
    const std::string gpus = pos(r->at("from")) + "," + pos(r->at("to"));
    const std::string file = ctx.out("dgx1-pair-" + pos(r->at("from")) + pos(r->at("to")) + ".json");
    const Json p = ctx.run({"predict", "allreduce", "--machine", "dgx1", "--gpus", gpus, "-b", "256M", "-e", "256M", "--json", file}, file);
    pair_busbw[gpus] = p.at("rows").back().at("busbw_GBps");
    ctx.say(fmt::format("  GPUs {} ({}): peer copy {:.1f} GB/s per direction ({:.1f} both ways), 256 MiB allreduce busbw {:.1f} GB/s",
                        gpus, r->at("class").get<std::string>(), r->at("copy_GBps").get<double>(),
                        2 * r->at("copy_GBps").get<double>(), p.at("rows").back().at("busbw_GBps").get<double>()));
  }
  const Json ring = ctx.run({"predict", "allreduce", "--machine", "dgx1", "--gpus", "8", "-b", "256M", "-e", "256M", "--json",
                             ctx.out("dgx1-ring.json")}, ctx.out("dgx1-ring.json"));
  ctx.note("best_pair", best);
  ctx.note("worst_pair", worst);
  ctx.note("pair_busbw_GBps", pair_busbw);
  ctx.note("ring8_busbw_GBps", ring.at("rows").back().at("busbw_GBps"));
  ctx.say(fmt::format("  8-GPU ring: busbw {:.1f} GB/s; {}", ring.at("rows").back().at("busbw_GBps").get<double>(),
                      t.at("ring_bottleneck").get<std::string>()));
  ctx.say("Published (p2pBandwidthLatencyTest, docs/references.md): one NVLink 48.5 GB/s both ways, two 96.9, PCIe+SMP 14.3-14.5.\n"
          "Question: why does the 8-GPU ring reach more than any single pair, and what would it lose\n"
          "if one of its channels had to use the pair without NVLink?");
}

// The index of the first point from which two series (the same sizes) stay close to each
// other to their last point (within 2%); a.points.size() when their last points differ.
std::size_t coincide_from(const scalelab::report::Series& a, const scalelab::report::Series& b) {
  std::size_t from = a.points.size();
  if (b.points.size() != from) return from;
  while (from > 0) {
    const auto [xa, ya] = a.points[from - 1];
    const auto [xb, yb] = b.points[from - 1];
    if (xa != xb || std::abs(ya - yb) > 0.02 * std::max(std::abs(ya), std::abs(yb))) break;
    --from;
  }
  return from;
}

void busbw_curves(StepContext& ctx) {
  // The course's servers, and a workstation people own: four GeForce cards whose driver gives
  // them no peer-to-peer access, so NCCL's ring goes through host memory whatever --p2p says.
  const std::vector<std::pair<std::string, std::string>> machines{
      {"dgx1", "8"}, {"dgx-a100", "8"}, {"pcie-8gpu", "8"}, {"workstation-4x4090", "4"}};
  Json table;
  // One colour per machine; P2P on solid with filled circles, P2P off dashed with larger open
  // squares, so that both stay visible where the model gives them the same busbw.
  scalelab::report::Chart chart;
  chart.title = "predicted allreduce busbw, all GPUs of each machine (cost model): P2P on solid, P2P off dashed";
  chart.x_label = "message size";
  chart.y_label = "busbw (GB/s)";
  chart.log_x = chart.log_y = chart.x_bytes = true;
  for (std::size_t mi = 0; mi < machines.size(); ++mi) {
    const auto& [m, gpus] = machines[mi];
    for (const std::string p2p : {"on", "off"}) {
      const std::string file = ctx.out("predict-" + m + "-p2p-" + p2p + ".json");
      const Json doc = ctx.run({"predict", "allreduce", "--machine", m, "--gpus", gpus, "--p2p", p2p, "-b", "8",
                                "-e", ctx.options().quick ? "256M" : "1G", "-f", ctx.options().quick ? "16" : "4", "--json", file},
                               file);
      const bool on = p2p == "on";
      scalelab::report::Series s{.label = m + " (" + gpus + " GPUs), P2P " + p2p, .points = {}, .color = scalelab::report::kPalette[mi],
                                 .dashtype = on ? 1 : 2, .pointtype = on ? 7 : 4, .pointsize = on ? 1.0 : 1.8};
      for (const auto& r : doc.at("rows")) s.points.emplace_back(r.at("size_bytes").get<double>(), r.at("busbw_GBps").get<double>());
      if (!on) {
        const std::size_t from = coincide_from(chart.series.back(), s);
        if (from == 0) {
          s.label += " (within 2% of on)";
        } else if (from < s.points.size()) {
          s.label += " (within 2% of on from " + scalelab::report::byte_size_label(s.points[from].first) + ")";
        }
      }
      chart.series.push_back(s);
      const Json& last = doc.at("rows").back();
      table[m]["p2p_" + p2p] = last.at("busbw_GBps");
      ctx.say(fmt::format("  {:<18} P2P {:<3}: {:7.1f} GB/s at {} B   ({})", m, p2p, last.at("busbw_GBps").get<double>(),
                          last.at("size_bytes").get<std::uint64_t>(), doc.at("bottleneck").get<std::string>()));
    }
  }
  ctx.note("largest_size_busbw_GBps", table);
  try {
    const auto files = scalelab::report::write_chart(chart, ctx.out("predicted-busbw"));
    ctx.note("chart", files.svg);
    ctx.say("  chart: " + files.svg);
  } catch (const std::exception& e) {
    ctx.say(std::string("  (no chart: ") + e.what() + ")");
  }
  ctx.say("Question: where do the curves flatten, and why does P2P off hurt DGX-1 far more than the PCIe server?\n"
          "Why are the workstation's two curves one, and how does its 4-GPU ring compare with the 8-GPU server's?");
}

// Step 4's allreduces on this machine: through Open MPI's messages (the ring, the library) and
// through shared memory (shm); the chart draws the same list.
constexpr std::array<const char*, 3> kThisMachineAlgorithms{"ring", "library", "shm"};

void predict_then_measure(StepContext& ctx) {
  const std::string profile = ctx.out("this-machine-profile.json");
  // --force: the profile stays in the lab's folder, and a busy machine marks this step unreliable
  // (its JSON's load verdict) instead of stopping the lab.
  std::vector<std::string> cal{"calibrate", "--profile", profile, "--force", "--json", ctx.out("calibration.json")};
  if (ctx.options().quick) cal.push_back("--quick");
  ctx.run(cal, ctx.out("calibration.json"));
  Json summary;
  for (const std::string algo : kThisMachineAlgorithms) {
    const std::string pf = ctx.out("predict-this-" + algo + ".json");
    ctx.run({"predict", "allreduce", "--machine", "this", "--ranks", "2", "--profile", profile, "--algo", algo, "-b", "64K",
             "-e", sizes_max(ctx), "-f", "2", "--json", pf});
    const std::string bf = ctx.out("bench-this-" + algo + ".json");
    const Json b = ctx.run({"run", "-np", "2", "--", "bench", "allreduce", "-b", "64K", "-e", sizes_max(ctx), "-f", "2",
                            "--algo", algo, "-n", ctx.options().quick ? "5" : "20", "--predict", "--profile", profile, "--json", bf},
                           bf);
    summary[algo] = b.at("runs").at(0).at("prediction");
    ctx.say(fmt::format("  {}: median |error| {:.1f}%, max {:.1f}%", algo,
                        summary[algo].value("median_abs_error_pct", NAN), summary[algo].value("max_abs_error_pct", NAN)));
  }
  ctx.note("prediction_errors", summary);
  if (ctx.unreliable()) {
    ctx.say("These errors compare a profile and a benchmark measured beside other processes: they say nothing "
            "about the model. Rerun this step on a quiet machine.");
  }
  ctx.say("The model's target: median |error| <= 10%, max <= 25% (a quiet machine; check `uptime`).\n"
          "Question: where is the library's error largest, and which mechanism (see docs/cost-model.md) explains it?\n"
          "Question: shm moves no message at all; what does it still pay that keeps it far from a memcpy's speed\n"
          "below a few MiB (see docs/performance.md)?");
}

void resnet50_links(StepContext& ctx) {
  // Each machine's allreduce is priced against that machine's own step: the step simulator's
  // forward and backward time of ResNet-50 at batch 64 per device there (docs/simulator.md).
  struct Case {
    const char* what;
    std::vector<std::string> predict;   // scalelab predict's machine flags
    std::vector<std::string> simulate;  // scalelab simulate's
  };
  const std::string size = fmt::format("{:.0f}", kResnet50Bytes);
  const std::string profile = ctx.out("this-machine-profile.json");
  const std::vector<Case> cases{
      {"DGX-1, 8 V100, NVLink rings", {"--machine", "dgx1", "--gpus", "8"}, {"--machine", "dgx1", "--gpus", "8"}},
      {"DGX-1, 8 V100, P2P off (host memory)", {"--machine", "dgx1", "--gpus", "8", "--p2p", "off"},
       {"--machine", "dgx1", "--gpus", "8", "--p2p", "off"}},
      {"8 V100 PCIe, two sockets (UPI)", {"--machine", "pcie-8gpu", "--gpus", "8"}, {"--machine", "pcie-8gpu", "--gpus", "8"}},
      {"4 V100 PCIe, one switch", {"--machine", "pcie-4gpu", "--gpus", "4"}, {"--machine", "pcie-4gpu", "--gpus", "4"}},
      {"DGX A100, NVSwitch", {"--machine", "dgx-a100", "--gpus", "8"}, {"--machine", "dgx-a100", "--gpus", "8"}},
      {"DGX H100, NVSwitch (NVLink 4)", {"--machine", "dgx-h100", "--gpus", "8"}, {"--machine", "dgx-h100", "--gpus", "8"}},
      {"Puhti, 2 nodes x 4 V100 (InfiniBand HDR100)", {"--machine", "puhti", "--gpus", "8"}, {"--machine", "puhti", "--gpus", "8"}},
      {"this machine, 2 CPU ranks (calibrated)", {"--machine", "this", "--ranks", "2", "--profile", profile},
       {"--machine", "this", "--gpus", "2", "--profile", profile}},
  };
  ctx.say(fmt::format("ResNet-50 gradients: {:.1f} MB per step; each machine's step (forward and backward) at batch {:.0f}\n"
                      "per device is the step simulator's.",
                      kResnet50Bytes / 1e6, kBatchPerGpu));
  Json rows = Json::array();
  int i = 0;
  for (const auto& c : cases) {
    const std::string file = ctx.out("resnet50-" + std::to_string(i) + ".json");
    std::vector<std::string> args{"predict", "allreduce", "-b", size, "-e", size};
    args.insert(args.end(), c.predict.begin(), c.predict.end());
    args.insert(args.end(), {"--json", file});
    const Json doc = ctx.run(args, file);
    const Json& r = doc.at("rows").back();
    const double t = r.at("time_us").get<double>() * 1e-6;
    const std::string sim_file = ctx.out("resnet50-step-" + std::to_string(i++) + ".json");
    std::vector<std::string> sim{"simulate", "--workload", "resnet50", "--batch-size", fmt::format("{:.0f}", kBatchPerGpu)};
    sim.insert(sim.end(), c.simulate.begin(), c.simulate.end());
    sim.insert(sim.end(), {"--json", sim_file});
    const double step_s = ctx.run(sim, sim_file).at("rows").back().at("compute_s").get<double>();
    rows.push_back({{"case", c.what}, {"time_ms", t * 1e3}, {"busbw_GBps", r.at("busbw_GBps")}, {"step_ms", step_s * 1e3},
                    {"fraction_of_step", t / step_s}});
    ctx.say(fmt::format("  {:<44} allreduce {:8.1f} ms against a {:8.1f} ms step: {:5.0f}%   (busbw {:.1f} GB/s)", c.what,
                        t * 1e3, step_s * 1e3, 100 * t / step_s, r.at("busbw_GBps").get<double>()));
  }
  ctx.note("resnet50", rows);
  ctx.say("Question: which links could hide the exchange behind the backward pass (about 2/3 of a step),\n"
          "and what busbw would that take? Which machines' GPUs outran their links?");
}

void chart(StepContext& ctx) {
  // Measured solid, predicted dashed, one colour per algorithm; the errors and the load in the title.
  scalelab::report::Chart c;
  c.x_label = "message size";
  c.y_label = "busbw (GB/s)";
  c.log_x = c.x_bytes = c.y_from_zero = true;
  std::string errors, where;
  double load = 0;
  for (std::size_t ai = 0; ai < kThisMachineAlgorithms.size(); ++ai) {
    const std::string algo = kThisMachineAlgorithms[ai];
    const Json b = ctx.earlier(ctx.out("bench-this-" + algo + ".json"), 4);
    const Json& run = b.at("runs").at(0);
    const double factor = run.at("benchmark").at("busbw_factor").get<double>();
    const char* color = scalelab::report::kPalette[ai];
    scalelab::report::Series measured{.label = algo + " measured", .points = {}, .color = color, .dashtype = 1, .pointtype = 7},
        predicted{.label = algo + " predicted", .points = {}, .color = color, .dashtype = 2, .pointtype = 4, .pointsize = 1.5};
    for (const auto& r : run.at("results")) {
      const double size = r.at("size_bytes").get<double>();
      measured.points.emplace_back(size, r.at("out_of_place").at("busbw_GBps").get<double>());
      if (r.at("predicted_us").is_number()) predicted.points.emplace_back(size, size / (r.at("predicted_us").get<double>() * 1e3) * factor);
    }
    c.series.push_back(measured);
    c.series.push_back(predicted);
    const Json& p = run.at("prediction");
    if (p.contains("median_abs_error_pct") && p["median_abs_error_pct"].is_number()) {
      errors += fmt::format("{}{} {:.0f}%", errors.empty() ? "" : ", ", algo, p["median_abs_error_pct"].get<double>());
    }
    if (b.contains("machine") && b["machine"].is_object()) {
      where = fmt::format("{}, {} logical CPUs", b["machine"].value("cpu_model", std::string("?")),
                          b["machine"].value("logical_cpus", 0));
    }
    if (b.contains("load") && b["load"].is_object()) load = std::max(load, b["load"].value("load_average_end", 0.0));
  }
  c.title = fmt::format("allreduce on this machine, 2 ranks: measured (solid) and predicted (dashed)\n"
                        "median |error| {}; {}, load average up to {:.1f}",
                        errors.empty() ? "-" : errors, where, load);
  try {
    const auto files = scalelab::report::write_chart(c, ctx.out("this-machine-busbw"));
    ctx.note("chart", files.svg);
    ctx.say("Chart: " + files.svg + " (data and gnuplot script beside it).");
  } catch (const std::exception& e) {
    ctx.say(std::string("(no chart: ") + e.what() + ")");
  }
}

}  // namespace

int main(int argc, char** argv) {
  scalelab::lab::Lab lab("lab3", "Topology: predict, then measure, allreduce over NVLink and PCIe");
  lab.uses({});  // its measured steps run 2 ranks of bench, with synthetic buffers
  lab.add_step({"This machine's topology",
                "scalelab detects this machine (CPU sockets and NUMA from hwloc, GPUs from CUDA when built with it) "
                "and prints it the way `nvidia-smi topo -m` does.",
                this_topology});
  lab.add_step({"DGX-1: best and worst GPU pair, and an 8-GPU ring",
                "The DGX-1's hybrid cube mesh gives some pairs two NVLinks, some one and some none. The model routes "
                "each pair over its widest path and builds NCCL-style ring channels.",
                dgx1});
  lab.add_step({"Predicted bus bandwidth against size: DGX-1, DGX A100, a PCIe server, a workstation, P2P on and off",
                "Small messages pay latency (a base cost plus one hop per ring step), large ones the slowest link a "
                "ring crosses. NCCL_P2P_DISABLE=1 sends every transfer through host memory.",
                busbw_curves});
  lab.add_step({"This machine: calibrate, predict, then measure with the real benchmark",
                "calibrate measures point-to-point, reduction and copy costs and the allocator's fresh-page cost on "
                "2 ranks; predict uses them; bench measures the same allreduce and prints the error per size.",
                predict_then_measure});
  lab.add_step({"ResNet-50's gradient exchange against each link",
                "Every step exchanges 97 MB (25.6 M float32 gradients). How long does that take on each machine, "
                "against the time a step computes?",
                resnet50_links});
  lab.add_step({"Chart: predicted and measured busbw against size",
                "One picture of the comparison of step 4, drawn with gnuplot (data and script kept beside it).", chart});
  return scalelab::labs::lab_main(lab, argc, argv);
}
