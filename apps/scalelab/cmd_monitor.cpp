// `scalelab monitor [-l SECONDS] [--output FILE.csv] [--count N] [--json FILE] [-- command args...]`: samples
// this node's GPUs through NVML into nvidia-smi-shaped CSV (lib/monitor), as the course does with
// `nvidia-smi --query-gpu=timestamp,index,name,utilization.gpu,memory.used,memory.total --format=csv
// -l 5`, and reports NVLink traffic between start and end. It samples until Ctrl-C, until --count
// samples, or while the command after `--` runs (then exits with that command's status).
#include <cmath>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "commands.h"
#include "core/error.h"
#include "core/results.h"
#include "monitor/nvml_sampler.h"
#include "monitor/session.h"

namespace scalelab::cli {
namespace {

constexpr const char* kUsage =
    "scalelab monitor [-l SECONDS] [--output FILE.csv] [--count N] [--json FILE] [-- command args...]\n\n"
    "Samples every GPU of this node through NVML (the NVIDIA driver's libnvidia-ml.so.1) and writes\n"
    "one CSV row per GPU per sample, in the shape of\n"
    "  nvidia-smi --query-gpu=timestamp,index,name,utilization.gpu,memory.used,memory.total,\\\n"
    "             power.draw,temperature.gpu --format=csv -l SECONDS\n"
    "It reads the NVLink throughput counters when it starts and when it ends, and reports each\n"
    "link's traffic (bytes, GB/s) or that the driver does not expose them. It samples until\n"
    "interrupted (Ctrl-C), until --count samples, or while the command after `--` runs, and then exits\n"
    "with that command's status.\n"
    "GPU status (scalelab monitor): ran (docs/gpu-status.md).\n\n"
    "examples:\n"
    "  scalelab monitor -l 5\n"
    "  scalelab monitor -l 1 --output gpu.csv -- scalelab run -np 8 -- train --model cnn --epochs 1\n"
    "  scalelab monitor --count 10 -l 0.5 --output gpu.csv --json gpu.json";

struct Parsed {
  monitor::SessionOptions session;
  std::string output;
  std::string json;
};

std::optional<Parsed> parse_monitor(const Args& args) {
  // Everything after the first `--` is the command to run; only what precedes it is ours.
  Args ours = args;
  Parsed p;
  ours.argv.clear();
  bool command = false;
  for (const auto& a : args.argv) {
    if (!command && a == "--") {
      command = true;
    } else if (command) {
      p.session.command.push_back(a);
    } else {
      ours.argv.push_back(a);
    }
  }
  po::options_description o("options");
  o.add_options()
      ("loop,l", po::value<double>()->default_value(5.0), "seconds between samples (nvidia-smi's -l)")
      ("output", po::value<std::string>()->default_value(""), "write the CSV here (default: standard output)")
      ("count", po::value<long long>()->default_value(0), "stop after N samples (0: until interrupted or the command ends)")
      ("json", po::value<std::string>()->default_value(""), "write the summary and NVLink traffic here (scalelab.monitor)");
  auto vm = parse(ours, kUsage, o);
  if (!vm) return std::nullopt;
  check_output_files(*vm, {"output", "json"});
  check_distinct_files(*vm, {"output", "json"});
  const double interval = (*vm)["loop"].as<double>();
  if (!monitor::valid_interval(interval)) {
    usage_error(args, "-l/--loop " + monitor::interval_problem(interval));
  }
  const long long count = (*vm)["count"].as<long long>();
  if (count < 0) usage_error(args, "--count " + std::to_string(count) + ": must not be negative (0: no limit)");
  if (command && p.session.command.empty()) usage_error(args, "nothing after `--`: name the command to run");
  p.session.monitor.interval_s = interval;
  p.session.monitor.count = static_cast<std::size_t>(count);
  p.output = (*vm)["output"].as<std::string>();
  p.session.monitor.output_name = p.output.empty() ? "standard output" : p.output;
  p.json = (*vm)["json"].as<std::string>();
  return p;
}

}  // namespace

int cmd_monitor(const Args& args) {
  const auto parsed = parse_monitor(args);
  if (!parsed) return 0;
  auto sampler = monitor::open_nvml_sampler();  // without the driver: one line, exit 1
  std::ofstream file;
  if (!parsed->output.empty()) {
    file.open(parsed->output, std::ios::out | std::ios::trunc);
    if (!file) throw_input("--output " + parsed->output + ": cannot write the file; check that its folder exists");
  }
  std::ostream& csv = parsed->output.empty() ? std::cout : file;
  // With the CSV on standard output, the report goes to standard error so the CSV stays clean.
  std::ostream& report_out = parsed->output.empty() ? std::cerr : std::cout;
  const monitor::SessionResult result = monitor::run_session(*sampler, csv, parsed->session);
  report_out << monitor::format_report(result.report) << std::flush;
  if (!parsed->json.empty()) {
    nlohmann::json doc = make_envelope("monitor", 1, args.full);
    doc["interval_s"] = parsed->session.monitor.interval_s;
    doc["csv"] = parsed->output.empty() ? nlohmann::json(nullptr) : nlohmann::json(parsed->output);
    doc["child"] = parsed->session.command.empty() ? nlohmann::json(nullptr)
                                                   : nlohmann::json{{"command", parsed->session.command},
                                                                    {"exit_code", result.exit_code}};
    doc["report"] = result.report;
    write_json_file(parsed->json, doc);
  }
  if (!result.report.error.empty() && result.exit_code == 0) {
    throw_runtime("GPU monitor stopped early: " + result.report.error);
  }
  return result.exit_code;
}

}  // namespace scalelab::cli
