// `scalelab converge [options]`: the large-batch convergence lesson in one command. Trains each
// configuration of converge_plan.h (baseline, naive large batch, linear scaling, + warm-up, sqrt
// scaling, LARS, LAMB) for the same epochs with lib/train's Trainer, in this process, one after
// another; prints each schedule before it runs, then the course's table, and writes the charts
// and (--json) every record. `--from A.json,B.json` redraws table and charts from earlier runs.
// Runs alone or under `scalelab run -np N -- converge ...` (emulated workers divide among ranks).
#include <algorithm>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "comm/factory.h"
#include "commands.h"
#include "core/launch_env.h"
#include "core/output_path.h"
#include "core/text.h"
#include "converge_plan.h"
#include "converge_report.h"
#include "load_report.h"
#include "core/error.h"
#include "core/results.h"
#include "optim/factory.h"
#include "train/trainer.h"
#include "train_options.h"

namespace scalelab::cli {
namespace {

// The course's convergence experiment (Lab 2): what --experiment course gives the training
// options the command line leaves unset. The options themselves, and their defaults otherwise,
// are train's (train_options.h).
struct CourseSetting {
  const char* option;
  const char* value;
};
constexpr CourseSetting kCourseExperiment[] = {{"model", "mlp"},     {"optimizer", "sgd"},         {"lr", "0.01"},
                                               {"epochs", "5"},      {"warmup-epochs", "1"},       {"lr-schedule", "cosine"}};

// "--model mlp --optimizer sgd ..." for the help text.
std::string course_settings() {
  std::string s;
  for (const CourseSetting& c : kCourseExperiment) s += fmt::format("{}--{} {}", s.empty() ? "" : " ", c.option, c.value);
  return s;
}

void apply_course_experiment(po::variables_map& vm) {
  for (const CourseSetting& c : kCourseExperiment) {
    if (!vm.count(c.option) || !vm.at(c.option).defaulted()) continue;
    boost::any& v = vm.at(c.option).value();
    if (v.type() == typeid(std::string)) v = std::string(c.value);
    else if (v.type() == typeid(double)) v = std::stod(c.value);
    else if (v.type() == typeid(int)) v = std::stoi(c.value);
  }
}

constexpr const char* kUsage =
    "scalelab converge [options]\n\n"
    "Trains the same model for the same epochs in several configurations and compares them: a\n"
    "small-batch baseline; a global batch --scale times larger with the same lr (naive); with the lr\n"
    "scaled linearly (Goyal et al.), without and with gradual warm-up; with square-root scaling;\n"
    "and LARS and LAMB at a batch --layerwise-scale times the baseline's. A large global batch is\n"
    "made of emulated workers (global batch / --micro-batch), each a micro-batch whose gradient is\n"
    "accumulated before the step, exactly as that many data-parallel ranks would average it.\n"
    "Prints the table (final test accuracy and loss, gap to the baseline, time and epochs to\n"
    "--target-accuracy) and writes charts of test accuracy and loss against epoch and time.\n"
    "The scaling rules use the baseline batch (--base-batch) as reference: --lr is the lr there.\n"
    "The training options, their spelling and their defaults are those of `scalelab train`; for the\n"
    "options left unset, --experiment course (the default) uses the course's settings (below)\n"
    "and --experiment none keeps train's defaults (the warm-up configurations then need\n"
    "--warmup-epochs > 0).\n\n"
    "configurations: baseline, naive, linear, linear-warmup, sqrt, lars, lamb\n\n"
    "examples:\n"
    "  scalelab converge --json converge.json        (the course's experiment)\n"
    "  scalelab converge --epochs 3 --configs baseline,naive,linear-warmup\n"
    "  scalelab converge --from a.json,b.json --charts charts";


struct Parsed {
  ConvergeSettings settings;
  std::string json, charts;
  std::vector<std::string> from;
};

std::optional<Parsed> parse_converge(const Args& args) {
  ConvergeSettings d;
  po::options_description o("options");
  add_train_options(o, TrainOptionSet::converge);
  o.add_options()
      ("experiment", po::value<std::string>()->default_value("course"),
       "course: the course's settings for the training options left unset (above); none: train's defaults")
      ("micro-batch", po::value<long long>()->default_value(0), "samples per emulated worker and backward pass (0: --base-batch)")
      ("scale", po::value<int>()->default_value(d.scale), "large global batch = base batch x scale")
      ("layerwise-scale", po::value<int>()->default_value(d.layerwise_scale), "LARS/LAMB global batch = base batch x this")
      ("lars-lr", po::value<double>()->default_value(d.lars_lr), "LARS learning rate (before its trust ratios)")
      ("lars-eta", po::value<float>()->default_value(d.lars_eta), "LARS trust coefficient")
      ("lamb-lr", po::value<double>()->default_value(d.lamb_lr), "LAMB learning rate")
      ("configs", po::value<std::string>()->default_value(""), "comma-separated configurations to run (default: all)")
      ("target-accuracy", po::value<double>()->default_value(d.target_accuracy), "test accuracy whose time to reach is reported")
      ("json", po::value<std::string>()->default_value(""), "write every record here (rank 0; rewritten after each configuration)")
      ("charts", po::value<std::string>()->default_value("converge-charts"), "folder for the charts (SVG, PNG, .dat, .gp); '' for none")
      ("from", po::value<std::string>()->default_value(""), "comma-separated converge JSON files: table and charts only, no training");
  auto vm = parse(args, std::string(kUsage) + "\n\nthe course's experiment: " + course_settings(), o);
  if (!vm) return std::nullopt;
  Parsed p;
  p.json = (*vm)["json"].as<std::string>();
  p.charts = (*vm)["charts"].as<std::string>();
  check_output_files(*vm, {"json"});  // before the training, not after it
  if (!p.charts.empty() && read_launch_env().rank == 0) prepare_output_folder("charts", p.charts);
  p.from = list_items((*vm)["from"].as<std::string>());
  if (!(*vm)["from"].defaulted() && p.from.empty()) usage_error(args, "--from '': give the converge records to redraw");
  if (!p.from.empty()) {
    // Redrawing reads the records as they are: an option that shapes a run would be ignored.
    for (const auto& [name, value] : *vm) {
      if (value.defaulted() || name == "from" || name == "charts" || name == "target-accuracy" || name == "json") continue;
      usage_error(args, "--" + name + " shapes a new run, which --from does not make (it redraws the records); leave it out");
    }
    // The same file however spelled (cv.json and ./cv.json).
    const auto same = [](const std::string& a, const std::string& b) {
      std::error_code ec;
      return a == b || std::filesystem::equivalent(a, b, ec);
    };
    for (std::size_t i = 0; i < p.from.size(); ++i) {
      for (std::size_t j = 0; j < i; ++j) {
        if (same(p.from[i], p.from[j])) usage_error(args, "--from names " + p.from[i] + " twice; give each record once");
      }
    }
  }
  if (!(*vm)["configs"].defaulted() && list_items((*vm)["configs"].as<std::string>()).empty()) {
    usage_error(args, "--configs '" + (*vm)["configs"].as<std::string>() + "': give configuration names, or leave --configs out for all");
  }
  ConvergeSettings& s = p.settings;
  s.target_accuracy = (*vm)["target-accuracy"].as<double>();
  if (!p.from.empty()) return p;  // redrawing: the training options are not used
  const std::string experiment = (*vm)["experiment"].as<std::string>();
  if (experiment == "course") {
    apply_course_experiment(*vm);
  } else if (experiment != "none") {
    usage_error(args, "--experiment " + experiment + ": use course or none");
  }
  s.train = read_train_options(*vm);
  if (s.train.warmup_named == optim::WarmupKind::none) {
    usage_error(args, "--warmup none: the warm-up configurations need one; use gradual, constant or horovod");
  }
  const long long micro = (*vm)["micro-batch"].as<long long>();
  if (micro < 0) usage_error(args, fmt::format("--micro-batch {}: must not be negative", micro));
  s.micro_batch = static_cast<std::size_t>(micro);
  s.scale = (*vm)["scale"].as<int>();
  s.layerwise_scale = (*vm)["layerwise-scale"].as<int>();
  s.lars_lr = (*vm)["lars-lr"].as<double>();
  s.lars_eta = (*vm)["lars-eta"].as<float>();
  s.lamb_lr = (*vm)["lamb-lr"].as<double>();
  s.configs = split_list((*vm)["configs"].as<std::string>());
  if (std::find(s.configs.begin(), s.configs.end(), std::string()) != s.configs.end()) {
    usage_error(args, "--configs " + (*vm)["configs"].as<std::string>() + ": an empty item (two commas, or one at an end); name configurations such as baseline,naive");
  }
  return p;
}

nlohmann::json settings_json(const ConvergeSettings& s) {
  const train::TrainConfig& c = s.train.config;
  return {{"model", c.model}, {"dataset", c.dataset.name}, {"epochs", c.epochs}, {"base_batch", s.base_batch()},
          {"micro_batch", s.micro_batch ? s.micro_batch : s.base_batch()}, {"scale", s.scale},
          {"layerwise_scale", s.layerwise_scale}, {"optimizer", c.optimizer}, {"lr", c.lr},
          {"reference_batch", s.base_batch()}, {"momentum", c.optimizer_options.momentum},
          {"weight_decay", c.optimizer_options.weight_decay}, {"warmup", optim::to_string(s.train.warmup_named)},
          {"warmup_epochs", s.train.schedule.warmup_epochs}, {"lr_schedule", optim::to_string(s.train.schedule.decay)},
          {"lars_lr", s.lars_lr}, {"lars_eta", s.lars_eta}, {"lamb_lr", s.lamb_lr}, {"seed", c.seed},
          {"threads", c.threads}, {"max_steps", c.max_steps}, {"target_accuracy", s.target_accuracy}};
}

void report(const nlohmann::json& records, double target, const std::string& charts) {
  std::cout << "\n";
  print_converge_table(std::cout, records, target);
  if (!charts.empty()) {
    for (const auto& svg : write_converge_charts(records, charts)) std::cout << "chart: " << svg << " (and .png)\n";
  }
}

int from_files(const Parsed& p, const Args& args) {
  const ConvergeRecords read = read_converge_records(p.from, p.settings.target_accuracy);
  const nlohmann::json& records = read.configurations;
  const double target = read.target_accuracy;
  report(records, target, p.charts);
  if (!p.json.empty()) {
    nlohmann::json doc = make_envelope("converge", kConvergeSchemaVersion, args.full);
    doc["from"] = p.from;
    doc["settings"] = {{"target_accuracy", target}};
    doc["configurations"] = records;
    doc["complete"] = true;
    write_json_file(p.json, doc);
  }
  return 0;
}

}  // namespace

int cmd_converge(const Args& args) {
  const auto parsed = parse_converge(args);
  if (!parsed) return 0;
  if (!parsed->from.empty()) return from_files(*parsed, args);
  const ConvergeSettings& s = parsed->settings;
  (void)make_converge_plan(s, 1);  // bad settings fail here, in one line, before MPI starts
  auto comm = comm::make_communicator(s.train.backend);
  const std::vector<ConvergeRun> runs = make_converge_plan(s, comm->size());
  const bool rank0 = comm->rank() == 0;
  nlohmann::json doc = make_envelope("converge", kConvergeSchemaVersion, args.full);
  doc["settings"] = settings_json(s);
  doc["ranks"] = comm->size();
  doc["configurations"] = nlohmann::json::array();
  doc["complete"] = false;
  if (rank0 && !parsed->json.empty()) write_json_file(parsed->json, doc);  // an unwritable path fails now
  const LoadReport load;  // did every rank get its cores while it trained (load_report.h)
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const ConvergeRun& run = runs[i];
    train::TrainConfig c = s.train.config;  // the shared options; the run sets batch, optimizer and lr
    c.batch_size = run.micro_batch;
    c.backward_passes_per_step = run.workers / comm->size();
    c.optimizer = run.optimizer;
    c.optimizer_options = run.optimizer_options;
    c.lr = run.schedule.base_lr;
    train::Trainer trainer(c, *comm);
    if (s.train.sync_batchnorm) trainer.enable_sync_batchnorm();
    optim::ScheduleConfig sc = run.schedule;
    sc.steps_per_epoch = static_cast<long>(trainer.steps_per_epoch());
    const optim::LrSchedule schedule(sc);
    trainer.set_lr_schedule([&schedule](long step) { return schedule.lr(step); });
    if (rank0 && c.verbose) {
      std::cout << fmt::format("\n=== [{}/{}] {}: {}; {} emulated workers x micro-batch {} ({} per rank)\n", i + 1,
                               runs.size(), run.name, run.description, run.workers, run.micro_batch,
                               c.backward_passes_per_step)
                << std::flush;
    }
    trainer.add_preamble(schedule.table());
    const train::TrainResult result = trainer.run();
    doc["configurations"].push_back(converge_record(run, schedule, c, result, s.target_accuracy));
    if (rank0 && !parsed->json.empty()) write_json_file(parsed->json, doc);
  }
  doc["load"] = load.finish(*comm, s.train.config.threads);
  doc["complete"] = true;
  if (rank0) {
    if (!parsed->json.empty()) write_json_file(parsed->json, doc);
    report(doc["configurations"], s.target_accuracy, parsed->charts);
  }
  return 0;
}

}  // namespace scalelab::cli
