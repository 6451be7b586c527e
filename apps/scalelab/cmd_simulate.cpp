// `scalelab simulate`: a workload's training step on a machine at several GPU counts (lib/sim):
// images/sec, step time and its parts, scaling efficiency and the bottleneck in words, as a table,
// a `scalelab.simulate` JSON record, a Chrome trace of one simulated step and charts.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "core/error.h"
#include "core/limits.h"
#include "core/results.h"
#include "machine_arg.h"
#include "core/size_parse.h"
#include "core/text.h"
#include "core/trace.h"
#include "model/profile.h"
#include "report/chart.h"
#include "report/table.h"
#include "sim/scaling.h"
#include "topo/catalog.h"
#include "train_options.h"

namespace scalelab::cli {
namespace {

// 2: the simulated machine is `simulated_machine`; `machine` is the envelope's, as in every record.
constexpr int kSimulateSchemaVersion = 2;

constexpr const char* kUsage =
    "scalelab simulate --workload W --machine M [--gpus 1,2,4,8 | --nodes N] [options]\n\n"
    "Predicts a data-parallel training step of a workload on a machine you may not have, at each\n"
    "GPU count: images/sec (sequences/sec for transformers), the step time and its parts (compute,\n"
    "exposed allreduce, optimizer, waiting for the input pipeline), the scaling efficiency against\n"
    "the smallest count, and what holds the step back. Layers are priced by a roofline of the GPU\n"
    "(datasheet peaks, achievable fractions per layer kind), gradient buckets by the collective cost\n"
    "model as backward produces them (as `scalelab predict` prices one allreduce). --machine this\n"
    "predicts `scalelab train` on this machine's CPU ranks from `scalelab calibrate`'s profile.\n"
    "The model and its limits: docs/simulator.md. Workloads: data/workloads; GPUs: data/devices.\n\n"
    "examples:\n"
    "  scalelab simulate --workload resnet50 --machine dgx1 --gpus 1,2,4,8 --batch-size 64\n"
    "  scalelab simulate --workload resnet50 --machine superpod-a100 --nodes 16 --precision amp\n"
    "  scalelab simulate --workload cnn --machine this --gpus 1,2 --batch-size 128 --threads 1\n"
    "  scalelab simulate --workload bert_large_128 --machine dgx-h100 --precision amp --timeline step.json";

struct Parsed {
  sim::ScalingRequest request;
  std::string json, timeline, chart;
  std::string decode_rate_from;  // the pipeline record --decode-rate named, if it named one
};

// The host's per-core decoding rate measured by `scalelab pipeline --predict --json FILE`: its
// complex-augmentation, accurate-IDCT rate (the ImageNet recipe's random-resized crop) where it was
// measured, else its first. An input error names the file when it holds none.
double pipeline_per_core_rate(const std::string& file) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(file, ec)) {
    throw_parameter(ErrorKind::usage, "decode_rate",
                    file + ": neither a number nor a file; give samples per second per core, or a file written by "
                           "scalelab pipeline --predict --json");
  }
  const nlohmann::json doc = read_json_file(file);
  if (!doc.is_object() || doc.value("schema", std::string()) != "scalelab.pipeline" || !doc.contains("per_core_images_per_s") ||
      !doc["per_core_images_per_s"].is_array() || doc["per_core_images_per_s"].empty()) {
    throw_parameter(ErrorKind::input, "decode_rate",
                    file + ": not a number, nor a pipeline record with per-core rates; give samples per second per core, or "
                           "a file written by scalelab pipeline --predict --json");
  }
  const nlohmann::json& rates = doc["per_core_images_per_s"];
  const nlohmann::json* pick = &rates[0];
  for (const auto& r : rates) {
    if (r.value("augment", std::string()) == "complex" && r.value("decode", std::string()) == "accurate") pick = &r;
  }
  const double rate = pick->value("images_per_s", 0.0);
  if (!(rate > 0)) throw_parameter(ErrorKind::input, "decode_rate", file + ": its per-core rate is not positive; measure it again");
  return rate;
}

std::vector<int> parse_counts(const std::string& text) {
  std::vector<int> counts;
  for (const std::string& item : split_list(text)) {
    if (item.empty()) throw_parameter(ErrorKind::usage, "gpus", text + ": an empty item (two commas, or one at an end); give GPU counts such as 1,2,4,8");
    const long long v = parse_int(item, "--gpus");
    if (v < 1 || v > limits::kMaxModelledDevices) {
      throw_parameter(ErrorKind::usage, "gpus", text + ": each count must be 1 to " + std::to_string(limits::kMaxModelledDevices));
    }
    counts.push_back(static_cast<int>(v));
  }
  if (counts.empty()) throw_parameter(ErrorKind::usage, "gpus", ": give GPU counts such as 1,2,4,8");
  std::sort(counts.begin(), counts.end());
  counts.erase(std::unique(counts.begin(), counts.end()), counts.end());
  return counts;
}

// 1, 2, 4, ... up to every GPU of `nodes` nodes of the machine.
std::vector<int> counts_for_nodes(const std::string& machine, int nodes) {
  const topo::Machine m = topo::resolve_machine(machine);
  if (nodes > m.nodes) {
    throw_parameter(ErrorKind::usage, "nodes",
                    std::to_string(nodes) + ": " + m.name + " has " + std::to_string(m.nodes) + " node(s); give 1 to " +
                        std::to_string(m.nodes));
  }
  const int total = nodes * m.gpus_per_node();
  std::vector<int> counts;
  for (int c = 1; c < total; c *= 2) counts.push_back(c);
  counts.push_back(total);
  return counts;
}

std::optional<Parsed> parse_simulate(const Args& args) {
  po::options_description o("options");
  o.add_options()
      ("workload", po::value<std::string>()->default_value("resnet50"), "catalog workload (data/workloads) or a workload file")
      ("machine", po::value<std::string>()->default_value("this"), "catalog machine ('scalelab topo --list'), machine file, or this")
      ("gpus", po::value<std::string>()->default_value(""), "GPU counts, filled node by node (default 1 and every power of two up to one node)")
      ("nodes", po::value<int>(), "every power of two of GPUs up to this many whole nodes")
      ("batch-size", po::value<long long>()->default_value(64), "samples per GPU per step, as train's --batch-size")
      ("precision", po::value<std::string>()->default_value("fp32"), "fp32, tf32 or amp (float16/bfloat16 compute, float32 master weights)")
      ("bucket-cap", po::value<std::string>()->default_value(default_bucket_cap()), "float32 gradient bytes per allreduce bucket, as train's; 0: one per tensor")
      ("fp16-allreduce", po::bool_switch(), "gradients on the wire as float16")
      ("p2p", po::value<std::string>()->default_value("on"), "GPU peer-to-peer: on, or off (through host memory, NCCL_P2P_DISABLE=1)")
      ("algo", po::value<std::string>()->default_value(""),
       "allreduce algorithm as `scalelab predict` names it (default: auto, what NCCL would choose, on GPUs; train's own on this machine)")
      ("optimizer", po::value<std::string>()->default_value(""),
       "sgd (with momentum), adam, lars or lamb: its memory traffic (default: sgd on GPUs, as the catalog workloads' "
       "recipes; train's own, adam, on this machine)")
      ("threads", po::value<int>()->default_value(1), "this machine: compute threads per rank, as train's --threads (the calibration times 1)")
      ("overlap", po::value<std::string>()->default_value("auto"),
       "buckets averaged while backward goes on: auto (on GPUs; on this machine's CPU ranks as train's --overlap auto "
       "decides at each rank count), on, or off (after backward)")
      ("decode-rate", po::value<std::string>(),
       "samples one host core decodes and augments per second (default: 80 for JPEG images, none for decoded data), or a "
       "`scalelab pipeline --predict --json` record whose measured per-core rate to use (complex augmentation, accurate IDCT where measured)")
      ("profile", po::value<std::string>(), "calibration profile for --machine this")
      ("json", po::value<std::string>()->default_value(""), "write the rows (schema scalelab.simulate)")
      ("timeline", po::value<std::string>()->default_value(""), "Chrome trace of one simulated step at the largest count")
      ("chart", po::value<std::string>()->default_value(""), "chart files BASE-efficiency and BASE-parts (SVG, PNG, .dat, .gp)");
  const auto vm = parse(args, kUsage, o);
  if (!vm) return std::nullopt;
  check_output_files(*vm, {"json", "timeline"});
  check_distinct_files(*vm, {"json", "timeline"});
  Parsed p;
  sim::ScalingRequest& q = p.request;
  q.workload = (*vm)["workload"].as<std::string>();
  q.machine = (*vm)["machine"].as<std::string>();
  if (q.machine != "this") (void)load_machine(q.machine);  // a bad file is named now; its warnings printed once
  if (vm->count("profile")) {
    q.profile = (*vm)["profile"].as<std::string>();
    if (q.machine != "this") {
      usage_error(args, "--profile " + q.profile + ": calibrates CPU ranks of this machine, not the GPUs of " + q.machine + "; leave it out");
    }
  }
  const std::string gpus = (*vm)["gpus"].as<std::string>();
  if (vm->count("nodes")) {
    if (!gpus.empty()) usage_error(args, "give --gpus or --nodes, not both");
    const int nodes = (*vm)["nodes"].as<int>();
    if (nodes < 1 || nodes > topo::kMaxNodes) {
      usage_error(args, "--nodes " + std::to_string(nodes) + ": give 1 to " + std::to_string(topo::kMaxNodes));
    }
    if (q.machine == "this") usage_error(args, "--nodes: this machine is one node; give --gpus (CPU ranks)");
    q.counts = counts_for_nodes(q.machine, nodes);
  } else if (!gpus.empty()) {
    q.counts = parse_counts(gpus);
  } else {
    q.counts = q.machine == "this" ? std::vector<int>{1, 2} : counts_for_nodes(q.machine, 1);
  }
  if (q.machine == "this") {
    // CPU ranks of this machine: as many as `scalelab run` would launch here, no more.
    for (const int n : q.counts) {
      if (n > limits::max_local_ranks()) {
        usage_error(args, "--gpus " + std::to_string(n) + ": this machine runs at most " +
                              std::to_string(limits::max_local_ranks()) + " ranks (" +
                              limits::machine_bound_basis(limits::kRanksPerHardwareThread) +
                              "); for more, simulate a machine that has them (--machine NAME)");
      }
    }
  }
  const long long batch = (*vm)["batch-size"].as<long long>();
  if (batch < 1) throw_parameter(ErrorKind::usage, "batch_size", std::to_string(batch) + ": give at least 1 sample per GPU");
  q.step.batch = static_cast<std::size_t>(batch);
  q.step.precision = sim::parse_precision((*vm)["precision"].as<std::string>());
  q.step.averaging.bucket_cap_bytes = parse_size((*vm)["bucket-cap"].as<std::string>(), "--bucket-cap");
  q.step.averaging.fp16_wire = (*vm)["fp16-allreduce"].as<bool>();
  q.step.algorithm = (*vm)["algo"].as<std::string>();
  // What the run being predicted would use: NCCL's choice on GPUs, train's default on CPU ranks.
  if (q.step.algorithm.empty()) q.step.algorithm = q.machine == "this" ? train::TrainConfig{}.algo : "auto";
  q.optimizer = (*vm)["optimizer"].as<std::string>();
  if (q.optimizer.empty()) q.optimizer = q.machine == "this" ? train::TrainConfig{}.optimizer : "sgd";
  // The calibration times the nn engine on one compute thread per rank: that is what it can price.
  const int threads = (*vm)["threads"].as<int>();
  if (q.machine != "this" && !(*vm)["threads"].defaulted()) {
    usage_error(args, "--threads " + std::to_string(threads) + ": compute threads of this machine's CPU ranks; " + q.machine +
                          " is priced as GPUs, so leave it out");
  }
  if (threads != 1) {
    usage_error(args, "--threads " + std::to_string(threads) + ": the simulator knows this machine's kernels on one thread per "
                          "rank; use --threads 1");
  }
  q.overlap = (*vm)["overlap"].as<std::string>();
  if (q.overlap != "auto" && q.overlap != "on" && q.overlap != "off") usage_error(args, "--overlap " + q.overlap + ": use auto, on or off");
  const std::string p2p = (*vm)["p2p"].as<std::string>();
  if (p2p != "on" && p2p != "off") usage_error(args, "--p2p " + p2p + ": use on or off");
  q.p2p = p2p == "on";
  if (vm->count("decode-rate")) {
    const std::string rate = (*vm)["decode-rate"].as<std::string>();
    std::size_t used = 0;
    try {
      q.decode_per_core_per_s = std::stod(rate, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == rate.size()) {
      // 0 leaves decoding out; anything else within rates a core could have (a rate of 1e-300 gave
      // a step time of 300 digits, inf the same as 0 without saying so).
      const double r = q.decode_per_core_per_s;
      if (!(r == 0 || (r >= 1e-3 && r <= 1e9))) {
        usage_error(args, "--decode-rate " + rate + ": give samples per second per core from 0.001 to 1e9, or 0 to leave decoding out");
      }
    } else {
      q.decode_per_core_per_s = pipeline_per_core_rate(rate);
      p.decode_rate_from = rate;
    }
  }
  p.json = (*vm)["json"].as<std::string>();
  p.timeline = (*vm)["timeline"].as<std::string>();
  p.chart = (*vm)["chart"].as<std::string>();
  return p;
}

std::string ms(double s) { return fmt::format("{:.2f}", s * 1e3); }

void print_table(const sim::ScalingResult& r, const sim::ScalingRequest& q) {
  const std::string unit = r.workload.unit;
  std::printf("# scalelab simulate: %s on %s\n", r.workload.title.c_str(), r.machine.c_str());
  std::printf("# device: %s; batch %zu per device, %s; buckets of <= %s, %s on the wire\n", r.device.title.c_str(),
              q.step.batch, std::string(sim::name_of(q.step.precision)).c_str(),
              format_size(q.step.averaging.bucket_cap_bytes).c_str(), q.step.averaging.fp16_wire ? "float16" : "float32");
  if (!r.collectives.empty()) std::printf("# allreduce: %s\n", r.collectives.c_str());
  std::printf("#\n# %5s %5s %12s %10s %10s %10s %10s %10s %6s  %s\n", "gpus", "nodes", (unit + "/s").c_str(),
              "step(ms)", "compute", "exp.comm", "optimizer", "pipe.wait", "eff.", "bottleneck");
  for (const sim::ScalingRow& row : r.rows) {
    const sim::StepParts& p = row.step.parts;
    std::printf("  %5d %5d %12.0f %10s %10s %10s %10s %10s %5.1f%%  %s\n", row.devices, row.nodes,
                row.step.samples_per_s, ms(row.step.step_s).c_str(), ms(p.compute_s()).c_str(),
                ms(p.exposed_comm_s).c_str(), ms(p.optimizer_s).c_str(), ms(p.pipeline_wait_s).c_str(),
                100.0 * row.scaling_efficiency, row.step.bottleneck.c_str());
  }
  bool some = false, all = true;
  for (const sim::ScalingRow& row : r.rows) {
    if (row.devices == 1) continue;
    some = some || row.overlap;
    all = all && row.overlap;
  }
  if (some || !all) {
    std::string which;
    for (const sim::ScalingRow& row : r.rows) {
      if (row.devices > 1 && row.overlap) which += (which.empty() ? "" : ", ") + std::to_string(row.devices);
    }
    std::printf("# buckets averaged %s\n", all ? "while backward goes on"
                                            : some ? ("while backward goes on at " + which + " devices, after it otherwise").c_str()
                                                   : "after backward (no overlap)");
  }
  std::printf("# predicted by the step model (docs/simulator.md), not measured\n");
}

void print_decode_source(const Parsed& p) {
  if (!p.decode_rate_from.empty()) {
    std::printf("# host decoding: %.1f samples/s per core, measured by scalelab pipeline (%s)\n",
                p.request.decode_per_core_per_s, p.decode_rate_from.c_str());
  }
}

nlohmann::json record(const sim::ScalingResult& r, const sim::ScalingRequest& q, const Args& args) {
  nlohmann::json doc = make_envelope("simulate", kSimulateSchemaVersion, args.full);
  doc["workload"] = {{"name", r.workload.name}, {"title", r.workload.title}, {"unit", r.workload.unit},
                     {"parameters", r.workload.parameters()}, {"forward_flops", r.workload.forward_flops()}};
  doc["simulated_machine"] = q.machine;
  doc["machine_title"] = r.machine;
  doc["device"] = r.device.name;
  doc["batch_per_device"] = q.step.batch;
  doc["precision"] = std::string(sim::name_of(q.step.precision));
  doc["bucket_cap_bytes"] = q.step.averaging.bucket_cap_bytes;
  doc["fp16_allreduce"] = q.step.averaging.fp16_wire;
  doc["algorithm"] = q.step.algorithm;
  doc["optimizer"] = q.optimizer;
  doc["p2p"] = q.p2p;
  doc["overlap"] = r.options.overlap;
  doc["decode_per_core_per_s"] = r.options.input.decode_per_core_per_s;
  doc["collectives"] = r.collectives;
  nlohmann::json rows = nlohmann::json::array();
  for (const sim::ScalingRow& row : r.rows) {
    const sim::StepParts& p = row.step.parts;
    nlohmann::json buckets = nlohmann::json::array();
    for (const sim::BucketTiming& b : row.step.buckets) {
      buckets.push_back({{"wire_bytes", b.wire_bytes}, {"ready_s", b.ready_s}, {"start_s", b.start_s},
                         {"seconds", b.seconds}, {"detail", b.detail}});
    }
    rows.push_back({{"gpus", row.devices}, {"nodes", row.nodes}, {"images_per_s", row.step.samples_per_s},
                    {"samples_per_s", row.step.samples_per_s}, {"step_s", row.step.step_s},
                    {"compute_s", p.compute_s()}, {"forward_s", p.forward_s}, {"backward_s", p.backward_s},
                    {"allreduce_s", p.allreduce_s}, {"exposed_comm_s", p.exposed_comm_s},
                    {"optimizer_s", p.optimizer_s}, {"pipeline_s", p.input_s}, {"pipeline_wait_s", p.pipeline_wait_s},
                    {"scaling_efficiency", row.scaling_efficiency}, {"bottleneck", row.step.bottleneck},
                    {"overlap", row.overlap},
                    {"buckets", buckets}});
  }
  doc["rows"] = rows;
  return doc;
}

// One simulated step on three tracks: compute (forward, backward per layer, optimizer),
// communication (each bucket), input pipeline. One forward and backward pass is drawn.
void write_timeline(const std::string& path, const sim::ScalingResult& r) {
  const sim::ScalingRow& row = r.rows.back();
  const sim::StepResult& s = row.step;
  Trace trace({"forward", "backward", "allreduce", "optimizer", "input"});
  // Each span's detail names what it prices: the layer (and its kind), or the bucket.
  const auto layer = [&](std::size_t i) {
    const sim::WorkloadLayer& l = r.workload.layers[i];
    return l.name + " (" + std::string(sim::name_of(l.kind)) + ")";
  };
  double t = 0;
  for (std::size_t i = 0; i < s.layer_forward_s.size(); ++i) {
    trace.add(0, 0, 0, t * 1e6, s.layer_forward_s[i] * 1e6, layer(i));
    t += s.layer_forward_s[i];
  }
  const double backward_start = t;
  for (std::size_t i = s.layer_backward_s.size(); i-- > 0;) {
    trace.add(1, 0, 0, t * 1e6, s.layer_backward_s[i] * 1e6, layer(i));
    t += s.layer_backward_s[i];
  }
  for (const sim::BucketTiming& b : s.buckets) {
    trace.add(2, 0, 1, (backward_start + b.start_s) * 1e6, b.seconds * 1e6,
              fmt::format("{:.1f} MB: {}", b.wire_bytes / 1e6, b.detail));
  }
  const double opt_start = t + s.parts.exposed_comm_s;  // t: the end of backward
  trace.add(3, 0, 0, opt_start * 1e6, s.parts.optimizer_s * 1e6);
  if (s.parts.input_s > 0) trace.add(4, 0, 2, 0.0, s.parts.input_s * 1e6);
  TraceLabels labels;
  labels.process_names = {fmt::format("simulated: {} on {} GPU{}", r.workload.name, row.devices, row.devices == 1 ? "" : "s")};
  labels.thread_names = {"compute", "communication", "input pipeline"};
  write_chrome_trace(path, trace, labels);
}

void write_charts(const std::string& base, const sim::ScalingResult& r, const std::string& machine) {
  std::vector<double> tics;
  report::Chart eff;
  const sim::ScalingRow& last = r.rows.back();
  eff.title = r.workload.name + " on " + machine + ": predicted scaling efficiency " +
              report::fixed(100.0 * last.scaling_efficiency, 1) + "% at " + std::to_string(last.devices) + " GPUs";
  eff.x_label = "GPUs";
  eff.y_label = "scaling efficiency (%)";
  eff.log_x = true;
  eff.y_from_zero = true;
  report::Series e{"predicted", {}};
  for (const sim::ScalingRow& row : r.rows) {
    e.points.emplace_back(row.devices, 100.0 * row.scaling_efficiency);
    tics.push_back(row.devices);
  }
  eff.series.push_back(e);
  eff.series.push_back({"ideal", {{tics.front(), 100.0}, {tics.back(), 100.0}}});
  eff.x_tics = tics;
  const report::ChartFiles a = report::write_chart(eff, base + "-efficiency");
  report::Chart parts;
  parts.title = r.workload.name + " on " + machine + ": step time by part (predicted)";
  parts.x_label = "GPUs";
  parts.y_label = "ms per step (cumulative)";
  parts.log_x = true;
  parts.y_from_zero = true;
  report::Series compute{"compute", {}}, comm{"+ exposed allreduce", {}}, opt{"+ optimizer", {}}, wait{"+ input wait", {}};
  for (const sim::ScalingRow& row : r.rows) {
    const sim::StepParts& p = row.step.parts;
    const double x = row.devices;
    compute.points.emplace_back(x, p.compute_s() * 1e3);
    comm.points.emplace_back(x, (p.compute_s() + p.exposed_comm_s) * 1e3);
    opt.points.emplace_back(x, (p.compute_s() + p.exposed_comm_s + p.optimizer_s) * 1e3);
    wait.points.emplace_back(x, row.step.step_s * 1e3);
  }
  parts.series = {compute, comm, opt, wait};
  parts.x_tics = tics;
  const report::ChartFiles b = report::write_chart(parts, base + "-parts");
  std::cout << "chart: " << a.svg << " (and .png)\nchart: " << b.svg << " (and .png)\n";
}

}  // namespace

int cmd_simulate(const Args& args) {
  const auto parsed = parse_simulate(args);
  if (!parsed) return 0;
  const sim::ScalingResult r = sim::simulate_scaling(parsed->request);
  for (const std::string& w : r.warnings) std::fprintf(stderr, "warning: %s\n", w.c_str());
  print_table(r, parsed->request);
  print_decode_source(*parsed);
  if (!parsed->json.empty()) {
    nlohmann::json doc = record(r, parsed->request, args);
    if (!parsed->decode_rate_from.empty()) doc["decode_rate_from"] = parsed->decode_rate_from;
    write_json_file(parsed->json, doc);
  }
  if (!parsed->timeline.empty()) write_timeline(parsed->timeline, r);
  if (!parsed->chart.empty()) write_charts(parsed->chart, r, parsed->request.machine);
  return 0;
}

}  // namespace scalelab::cli
