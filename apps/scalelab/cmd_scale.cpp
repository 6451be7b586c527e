// `scalelab scale --rank-counts 1,2,4 [train options]`: the course's scaling experiment in one command.
// It declares the shared training options (train_options.h), checks them once, and passes those
// given to every run.
// Runs the same `scalelab train` at each rank count through `scalelab run -np N -- train ...`
// (mpirun with --bind-to none, --oversubscribe and --allow-run-as-root where needed), reads each
// run's --json, prints the table (ranks, global batch, images/sec, speed-up, scaling efficiency,
// test accuracy) and draws the chart of images/sec against ranks beside the ideal line.
// Speed-up and efficiency are relative to the smallest rank count:
//   speed-up(n) = ips(n) / ips(n0),   efficiency(n) = speed-up(n) / (n / n0).
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "commands.h"
#include "core/error.h"
#include "core/launch_env.h"
#include "core/limits.h"
#include "core/machine_info.h"
#include "core/output_path.h"
#include "core/process.h"
#include "core/results.h"
#include "core/size_parse.h"
#include "core/stats.h"
#include "core/text.h"
#include "lab/runner.h"
#include "load_report.h"
#include "report/chart.h"
#include "report/table.h"
#include "sim/scaling.h"
#include "train_options.h"

namespace scalelab::cli {
namespace {
namespace fs = std::filesystem;

constexpr const char* kUsage =
    "scalelab scale --rank-counts 1,2,4 [--repeat R] [--out DIR] [--chart BASE] [--json FILE] [train options]\n\n"
    "Runs `scalelab train` with the given options at each rank count (through `scalelab run -np N`,\n"
    "i.e. mpirun), then prints the scaling table: ranks, global batch, images/sec (median over the\n"
    "run's epochs, all ranks together), speed-up and scaling efficiency relative to the smallest\n"
    "rank count, and test accuracy. The chart shows images/sec against ranks with the ideal line.\n"
    "--batch-size stays per rank, so the global batch grows with the ranks (as in Horovod).\n"
    "The training options are checked here, before any run, and passed to every run; those naming\n"
    "one file every run would write (--checkpoint, --resume, --timeline, --gpu-monitor) are refused.\n\n"
    "example: scalelab scale --rank-counts 1,2 --model cnn --epochs 1 --max-steps 100";

struct ScaleArgs {
  std::vector<int> ranks;
  std::string out;
  std::string chart;
  std::string json;
  int repeat = 1;
  std::vector<std::string> train_args;  // the training options given, as `scalelab train` reads them
  TrainOptions train;                   // the same, read
  bool predict = false;                 // print the step simulator's prediction beside each row
  std::string profile;                  // its calibration profile ("": the default path)
};

std::vector<int> parse_ranks(const Args& args, const std::string& text) {
  std::vector<int> r;
  for (const auto& item : split_list(text)) {
    if (item.empty()) usage_error(args, "--rank-counts " + text + ": an empty item (two commas, or one at an end); give rank counts such as 1,2,4");
    const auto v = parse_int(item, "--rank-counts");
    if (v < 1 || v > limits::max_local_ranks()) {
      usage_error(args, "--rank-counts " + text + ": each rank count must be 1.." + std::to_string(limits::max_local_ranks()) +
                            " on this machine (" + limits::machine_bound_basis(limits::kRanksPerHardwareThread) + ")");
    }
    // Given twice, one count would run once without a word: a typo for another count, most likely.
    if (std::find(r.begin(), r.end(), static_cast<int>(v)) != r.end()) {
      usage_error(args, "--rank-counts " + text + ": " + std::to_string(v) + " is given twice; give each rank count once "
                        "(--repeat R runs each R times)");
    }
    r.push_back(static_cast<int>(v));
  }
  if (r.empty()) usage_error(args, "--rank-counts: give rank counts such as 1,2,4");
  std::sort(r.begin(), r.end());
  return r;
}

std::optional<ScaleArgs> parse_scale(const Args& args) {
  po::options_description o("options");
  o.add_options()
      ("rank-counts", po::value<std::string>(), "rank counts to run, comma separated, e.g. 1,2,4 (required)")
      ("out", po::value<std::string>()->default_value("scale-out"), "folder for each run's JSON")
      ("chart", po::value<std::string>()->default_value(""), "chart files BASE.svg/.png/.dat/.gp (default <out>/scaling)")
      ("repeat", po::value<int>()->default_value(1), "run each rank count R times, interleaved; report the median")
      ("json", po::value<std::string>()->default_value(""), "write the table as JSON")
      ("predict", po::bool_switch(), "print the step simulator's prediction (scalelab simulate --machine this) beside each row, with the error; needs scalelab calibrate")
      ("profile", po::value<std::string>()->default_value(""), "calibration profile for --predict (default: calibrate's)");
  po::options_description train_options("training options (as scalelab train takes them)");
  add_train_options(train_options, TrainOptionSet::full);
  o.add(train_options);
  std::vector<po::option> given;
  auto vm = parse(args, kUsage, o, nullptr, &given);
  if (!vm) return std::nullopt;
  ScaleArgs s;
  s.train = read_train_options(*vm);  // a bad value is one line now, not one per run
  if (!vm->count("rank-counts")) usage_error(args, "give the rank counts with --rank-counts, e.g. --rank-counts 1,2");
  s.ranks = parse_ranks(args, (*vm)["rank-counts"].as<std::string>());
  s.out = (*vm)["out"].as<std::string>();
  s.chart = (*vm)["chart"].as<std::string>();
  s.json = (*vm)["json"].as<std::string>();
  s.repeat = (*vm)["repeat"].as<int>();
  if (s.repeat < 1 || s.repeat > 100) usage_error(args, "--repeat " + std::to_string(s.repeat) + ": give 1..100 runs per rank count");
  for (const po::option& opt : given) {
    if (train_options.find_nothrow(opt.string_key, false) == nullptr) continue;  // scale's own
    if (shared_by_every_run(opt.string_key)) {
      usage_error(args, "--" + opt.string_key + " would be shared by every run; use scalelab train for it");
    }
    s.train_args.push_back("--" + opt.string_key);
    s.train_args.insert(s.train_args.end(), opt.value.begin(), opt.value.end());
  }
  if (s.chart.empty()) s.chart = (fs::path(s.out) / "scaling").string();
  // Every output place checked before the first run, not after the last.
  if (read_launch_env().rank == 0) {
    prepare_output_folder("out", s.out);
    // The chart's folder is created as write_chart would create it; then its files must be writable.
    if (const fs::path dir = fs::path(s.chart).parent_path(); !dir.empty() && !fs::is_directory(dir)) {
      prepare_output_folder("chart", dir.string());
    }
    report::check_chart_output("chart", s.chart);
    check_output_files(*vm, {"json"});
  }
  s.predict = (*vm)["predict"].as<bool>();
  s.profile = (*vm)["profile"].as<std::string>();
  if (s.predict && s.train.config.threads != 1) {
    usage_error(args, "--predict: the simulator knows this machine's kernels on one thread per rank; use --threads 1");
  }
  return s;
}

// What the step simulator predicts for these runs: the model as a workload on this machine's
// CPU ranks, at the same batch, optimizer and averaging (lib/sim/scaling.h).
sim::ScalingResult prediction(const ScaleArgs& s) {
  const train::TrainConfig& c = s.train.config;
  sim::ScalingRequest q;
  q.workload = c.model;
  q.machine = "this";
  q.profile = s.profile;
  q.counts = s.ranks;
  q.optimizer = c.optimizer;
  q.overlap = c.overlap;
  q.step.batch = c.batch_size;
  q.step.algorithm = c.algo;
  q.step.averaging = {.bucket_cap_bytes = c.bucket_cap_bytes, .fp16_wire = c.fp16_allreduce,
                      .backward_passes_per_step = c.backward_passes_per_step};
  return sim::simulate_scaling(q);
}

struct Row {
  int ranks = 0;
  double global_batch = 0;
  double ips = 0;
  double test_accuracy = -1;
  double seconds = 0;       // all runs together
  double peak_rss_mib = 0;
  double load_average = 0;  // the largest 1-minute load average seen at the end of a run
  std::string load_warning; // a run's warning when a rank did not get its core (load_report.h); "" when none
  double load_share = 1;    // the least share of a core a rank of a contended run received
  std::string json_file;
  std::string command;
};

}  // namespace

int cmd_scale(const Args& args) {
  const auto parsed = parse_scale(args);
  if (!parsed) return 0;
  // Predicted first: a missing profile is one line before anything trains.
  const std::optional<sim::ScalingResult> predicted =
      parsed->predict ? std::optional<sim::ScalingResult>(prediction(*parsed)) : std::nullopt;
  if (predicted) {
    for (const std::string& w : predicted->warnings) std::fprintf(stderr, "warning: %s\n", w.c_str());
  }
  fs::create_directories(parsed->out);
  const std::string bin = scalelab_binary();
  std::vector<Row> rows(parsed->ranks.size());
  std::vector<std::vector<double>> ips_runs(parsed->ranks.size());
  // Repeats interleave the rank counts (1, 2, 1, 2, ...) so that a drift in the machine's load
  // affects every rank count alike; each count's figure is the median over its runs.
  for (int rep = 0; rep < parsed->repeat; ++rep) {
    for (std::size_t i = 0; i < parsed->ranks.size(); ++i) {
      const int n = parsed->ranks[i];
      Row& row = rows[i];
      row.ranks = n;
      const std::string suffix = parsed->repeat > 1 ? "-run" + std::to_string(rep + 1) : "";
      row.json_file = (fs::path(parsed->out) / ("train-" + std::to_string(n) + "ranks" + suffix + ".json")).string();
      std::vector<std::string> cmd{"run", "-np", std::to_string(n), "--", "train"};
      cmd.insert(cmd.end(), parsed->train_args.begin(), parsed->train_args.end());
      cmd.insert(cmd.end(), {"--json", row.json_file});
      row.command = lab::shell_line(cmd).substr(2);
      std::cout << "\n" << lab::shell_line(cmd) << std::endl;
      fs::remove(row.json_file);
      std::vector<std::string> full{bin};
      full.insert(full.end(), cmd.begin(), cmd.end());
      const int code = run_process(full, "", /*forward_signals=*/true);  // stopping scale stops the run
      if (code != 0) {
        const std::string msg = "scalelab scale: the run at " + std::to_string(n) + " rank" + (n == 1 ? "" : "s") +
                                " exited with code " + std::to_string(code) + "; its output above says why";
        if (code == 2) throw_usage(msg);
        throw_runtime(msg);
      }
      const nlohmann::json doc = read_json_file(row.json_file);
      std::vector<double> ips;
      for (const auto& e : doc.at("epochs")) {
        ips.push_back(e.at("images_per_second").get<double>());
        if (!e.at("test_accuracy").is_null()) row.test_accuracy = e.at("test_accuracy").get<double>();
        row.peak_rss_mib = std::max(row.peak_rss_mib, e.at("peak_rss_mib").get<double>());
      }
      if (ips.empty()) throw_runtime(row.json_file + ": holds no epochs");
      ips_runs[i].push_back(median(ips));
      row.global_batch = doc.at("global_batch").get<double>();
      row.seconds += doc.value("seconds", 0.0);
      row.load_average = std::max(row.load_average, doc.value("load_average_end", 0.0));
      if (contended(doc.value("load", nlohmann::json()))) {
        double share = 1;
        for (const auto& r : doc["load"]["ranks"]) share = std::min(share, r.value("cpu_share", 1.0));
        if (row.load_warning.empty() || share < row.load_share) {
          row.load_warning = doc["load"]["warning"].get<std::string>();
          row.load_share = share;
        }
      }
    }
  }
  for (std::size_t i = 0; i < rows.size(); ++i) rows[i].ips = median(ips_runs[i]);
  // How far a rank count's runs lie apart: half their range over their median, in percent. A
  // prediction's error inside it is as close as the measurement repeats itself.
  const auto spread_pct = [&](std::size_t i) {
    const auto [lo, hi] = std::minmax_element(ips_runs[i].begin(), ips_runs[i].end());
    return 50.0 * (*hi - *lo) / rows[i].ips;
  };
  const bool repeated = parsed->repeat > 1;

  const Row& base = rows.front();
  std::vector<report::Column> columns{{"ranks", "", 6},     {"global batch", "", 12}, {"images/sec", "", 11},
                                      {"speed-up", "", 9},  {"efficiency", "", 10},   {"test acc", "", 9},
                                      {"peak RSS", "(MiB)", 9}, {"load", "", 6}};
  if (repeated) columns.insert(columns.begin() + 3, {"runs", "(+/-)", 7});
  if (predicted) {
    columns.push_back({"predicted", "(img/s)", 11});
    columns.push_back({"error", "", 8});
    columns.push_back({"pred. eff.", "", 10});
  }
  report::ConsoleTable table(columns);
  std::cout << "\n# scaling: images/sec of all ranks together, median over epochs"
            << (parsed->repeat > 1 ? " and " + std::to_string(parsed->repeat) + " interleaved runs" : "")
            << "; speed-up and efficiency vs " << base.ranks << " rank" << (base.ranks == 1 ? "" : "s")
            << "; load: 1-minute load average after the run\n";
  table.print_header(std::cout);
  nlohmann::json doc = make_envelope("scale", 1, args.full);
  doc["train_args"] = parsed->train_args;
  doc["base_ranks"] = base.ranks;
  doc["repeat"] = parsed->repeat;
  doc["rows"] = nlohmann::json::array();
  report::Chart chart;
  chart.title = "Scaling: images/sec against ranks";
  chart.x_label = "ranks";
  chart.y_label = "images/sec (all ranks)";
  report::Series measured{"measured", {}}, ideal{"ideal (linear from " + std::to_string(base.ranks) + " rank)", {}};
  for (const Row& r : rows) {
    const double speedup = r.ips / base.ips;
    const double efficiency = speedup / (static_cast<double>(r.ranks) / base.ranks);
    std::vector<std::string> cells{std::to_string(r.ranks), report::fixed(r.global_batch, 0), report::fixed(r.ips, 1),
                                   report::fixed(speedup, 2) + "x", report::fixed(efficiency * 100, 1) + "%",
                                   r.test_accuracy < 0 ? "-" : report::fixed(r.test_accuracy, 4),
                                   report::fixed(r.peak_rss_mib, 0), report::fixed(r.load_average, 1)};
    const auto index = static_cast<std::size_t>(&r - rows.data());
    if (repeated) cells.insert(cells.begin() + 3, report::fixed(spread_pct(index), 1) + "%");
    nlohmann::json forecast = nullptr;
    if (predicted) {
      const sim::ScalingRow& p = predicted->rows[index];
      const double error_pct = 100.0 * (p.step.samples_per_s - r.ips) / r.ips;
      cells.insert(cells.end(), {report::fixed(p.step.samples_per_s, 1), report::fixed(error_pct, 1) + "%",
                                 report::fixed(p.scaling_efficiency * 100, 1) + "%"});
      forecast = {{"images_per_second", p.step.samples_per_s}, {"error_pct", error_pct},
                  {"efficiency", p.scaling_efficiency}, {"efficiency_points", 100.0 * (p.scaling_efficiency - efficiency)},
                  {"bottleneck", p.step.bottleneck}};
    }
    table.print_row(std::cout, cells);
    doc["rows"].push_back({{"ranks", r.ranks},
                           {"global_batch", static_cast<long long>(r.global_batch)},
                           {"images_per_second", r.ips},
                           {"speedup", speedup},
                           {"efficiency", efficiency},
                           {"test_accuracy", r.test_accuracy < 0 ? nlohmann::json(nullptr) : nlohmann::json(r.test_accuracy)},
                           {"peak_rss_mib", r.peak_rss_mib},
                           {"images_per_second_runs", ips_runs[index]},
                           {"images_per_second_spread_pct", spread_pct(index)},
                           {"load_average", r.load_average},
                           {"load_verdict", r.load_warning.empty() ? "quiet" : "contended"},
                           {"seconds", r.seconds},
                           {"json_file", r.json_file},
                           {"command", r.command},
                           {"predicted", forecast}});
    measured.points.emplace_back(r.ranks, r.ips);
    ideal.points.emplace_back(r.ranks, base.ips * r.ranks / base.ranks);
    chart.x_tics.push_back(r.ranks);  // integer tics at the rank counts measured, nothing between
  }
  chart.series = {measured, ideal};
  // From 0, so that the gap to ideal is not magnified; the key figures and the machine in the title.
  chart.y_from_zero = true;
  {
    const Row& last = rows.back();
    const double efficiency = last.ips / base.ips / (static_cast<double>(last.ranks) / base.ranks);
    double load = 0;
    for (const Row& r : rows) load = std::max(load, r.load_average);
    const MachineInfo m = read_machine_info();
    chart.title = "Scaling efficiency " + report::fixed(efficiency * 100, 1) + "% at " + std::to_string(last.ranks) +
                  " ranks (" + (m.cpu_model.empty() ? "" : m.cpu_model + ", ") + std::to_string(m.logical_cpus) +
                  " logical CPUs, load average up to " + report::fixed(load, 1) + ")";
  }
  try {
    const report::ChartFiles files = report::write_chart(chart, parsed->chart);
    doc["chart"] = {{"svg", files.svg}, {"png", files.png}, {"dat", files.dat}, {"gp", files.gp}};
    std::cout << "chart: " << files.svg << " and " << files.png << "\n";
  } catch (const Error& e) {
    doc["chart"] = {{"error", e.what()}};
    std::cerr << "warning: no chart: " << e.what() << "\n";
  }
  if (predicted) {
    std::cout << "# predicted by the step model (docs/simulator.md) from " << predicted->machine
              << "; error = (predicted - measured) / measured\n";
  }
  if (repeated) {
    std::cout << "# runs (+/-): half the range of the " << parsed->repeat << " runs' images/sec over their median"
              << (predicted ? "; an error within it is within how well the measurement repeats\n" : "\n");
  }
  // One line for the whole table: the run whose rank got the least of its core.
  std::string load_warning;
  double least_share = 2;
  for (const Row& r : rows) {
    if (!r.load_warning.empty() && r.load_share < least_share) {
      least_share = r.load_share;
      load_warning = "the run at " + std::to_string(r.ranks) + " rank" + (r.ranks == 1 ? "" : "s") + ": " +
                     r.load_warning;
    }
  }
  doc["load"] = {{"verdict", load_warning.empty() ? "quiet" : "contended"},
                 {"warning", load_warning.empty() ? nlohmann::json(nullptr) : nlohmann::json(load_warning)}};
  if (!load_warning.empty()) std::cerr << "warning: " + load_warning + "\n" << std::flush;
  if (!parsed->json.empty()) write_json_file(parsed->json, doc);
  return 0;
}

}  // namespace scalelab::cli
