// The lab step runner (lab/runner.h): option parsing, child processes, the lab's JSON record.
#include "lab/runner.h"

#include <unistd.h>

#include <filesystem>
#include <iostream>

#include <boost/program_options.hpp>

#include "core/error.h"
#include "core/process.h"
#include "core/results.h"
#include "core/timer.h"

namespace scalelab::lab {
namespace fs = std::filesystem;
namespace po = boost::program_options;

std::string shell_line(const std::vector<std::string>& args) {
  std::string line = "$ scalelab";
  for (const auto& a : args) {
    const bool plain = !a.empty() && a.find_first_of(" \t\"'$\\*?;&|<>()") == std::string::npos;
    line += " " + (plain ? a : "'" + a + "'");
  }
  return line;
}

std::string find_scalelab_binary() {
  if (const char* env = std::getenv("SCALELAB_BIN"); env != nullptr && *env != '\0') {
    if (::access(env, X_OK) != 0) throw_usage(std::string("SCALELAB_BIN=") + env + ": not an executable file");
    return env;
  }
  const fs::path beside = fs::path(this_executable()).parent_path() / "scalelab";
  if (::access(beside.c_str(), X_OK) != 0) {
    throw_usage("cannot find the scalelab binary beside this lab (" + beside.string() +
                "); build the 'scalelab' target or set SCALELAB_BIN");
  }
  return beside.string();
}

StepContext::StepContext(const LabOptions& options, std::string scalelab_bin, int number, nlohmann::json& record)
    : options_(options), bin_(std::move(scalelab_bin)), number_(number), record_(record) {}

std::string StepContext::out(const std::string& name) const { return (fs::path(options_.out_dir) / name).string(); }

nlohmann::json StepContext::run(const std::vector<std::string>& args, const std::string& json_file) {
  const std::string line = shell_line(args);
  std::cout << "\n" << line << "\n" << std::flush;
  std::vector<std::string> full{bin_};
  full.insert(full.end(), args.begin(), args.end());
  if (!json_file.empty()) fs::remove(json_file);  // a stale file must not pass for this run's
  const double t0 = now_seconds();
  const int code = run_process(full);
  const double seconds = now_seconds() - t0;
  nlohmann::json entry{{"command", line.substr(2)}, {"argv", args}, {"exit_code", code}, {"seconds", seconds}};
  nlohmann::json result;
  if (code == 0 && !json_file.empty()) {
    result = read_json_file(json_file);
    entry["json_file"] = json_file;
    entry["result"] = result;
  }
  record_["commands"].push_back(entry);
  if (code != 0) {
    throw_runtime("step " + std::to_string(number_) + ": '" + line.substr(2) + "' exited with code " +
                  std::to_string(code) + "; its output above says why");
  }
  return result;
}

nlohmann::json StepContext::earlier(const std::string& json_file, int step) const {
  if (!fs::exists(json_file)) {
    throw_usage(json_file + " is missing: run step " + std::to_string(step) + " first (--step " + std::to_string(step) +
                ") with the same --out");
  }
  return read_json_file(json_file);
}

void StepContext::say(const std::string& text) const { std::cout << text << "\n" << std::flush; }

void StepContext::note(const std::string& key, const nlohmann::json& value) { record_["findings"][key] = value; }

Lab::Lab(std::string name, std::string title) : name_(std::move(name)), title_(std::move(title)) {}

int Lab::main(int argc, char** argv) {
  LabOptions o;
  po::options_description desc("options");
  desc.add_options()("help,h", "show this help")("list", "list the steps and exit")(
      "quick", po::bool_switch(&o.quick), "the short variant (CI-affordable): fewer steps per epoch, same lessons")(
      "step", po::value<int>(&o.only_step)->default_value(0), "run only step N (1-based; 0: all)")(
      "ranks", po::value<int>(&o.ranks)->default_value(2), "N, the rank count of the multi-rank steps")(
      "dataset", po::value<std::string>(&o.dataset)->default_value("fashion-mnist"),
      "dataset of the training steps: fashion-mnist, synthetic or a folder of IDX files")(
      "out", po::value<std::string>(&o.out_dir)->default_value(name_ + "-out"), "folder for the steps' files")(
      "json", po::value<std::string>(&o.json), "write the lab's record here (default <out>/<lab>.json)");
  const std::vector<std::string> args(argv, argv + argc);
  try {
    po::variables_map vm;
    po::store(po::command_line_parser(argc, argv).options(desc).run(), vm);
    po::notify(vm);
    if (vm.count("help")) {
      std::cout << "usage: " << name_ << " [--quick] [--step N] [--ranks N] [--dataset NAME] [--out DIR] [--json FILE]\n\n"
                << title_ << "\n\n" << desc << "\n";
      return 0;
    }
    if (vm.count("list")) {
      for (std::size_t i = 0; i < steps_.size(); ++i) std::cout << i + 1 << ". " << steps_[i].title << "\n";
      return 0;
    }
    if (o.only_step < 0 || o.only_step > static_cast<int>(steps_.size())) {
      throw_usage("--step " + std::to_string(o.only_step) + ": this lab has steps 1.." + std::to_string(steps_.size()));
    }
    if (o.ranks < 2) throw_usage("--ranks " + std::to_string(o.ranks) + ": the multi-rank steps need at least 2");
    if (o.json.empty()) o.json = (fs::path(o.out_dir) / (name_ + ".json")).string();
    return run(o, args);
  } catch (const po::error& e) {
    std::cerr << "error: " << name_ << ": " << e.what() << "; see '" << name_ << " --help'\n";
    return 2;
  } catch (const Error& e) {
    std::cerr << "error: " << name_ << ": " << e.what() << "\n";
    return e.exit_code();
  }
}

int Lab::run(const LabOptions& o, const std::vector<std::string>& argv) {
  const std::string bin = find_scalelab_binary();
  fs::create_directories(o.out_dir);
  nlohmann::json record = make_envelope("lab", 1, argv);
  record["lab"] = name_;
  record["title"] = title_;
  record["inputs"] = {{"quick", o.quick}, {"step", o.only_step}, {"ranks", o.ranks}, {"dataset", o.dataset},
                     {"out", o.out_dir}};
  record["scalelab_binary"] = bin;
  record["steps"] = nlohmann::json::array();
  const double t0 = now_seconds();
  std::cout << "=== " << name_ << ": " << title_ << (o.quick ? " (quick)" : "") << " ===\n";
  int code = 0;
  for (std::size_t i = 0; i < steps_.size(); ++i) {
    const int number = static_cast<int>(i) + 1;
    if (o.only_step != 0 && o.only_step != number) continue;
    const Step& step = steps_[i];
    std::cout << "\n--- Step " << number << "/" << steps_.size() << ": " << step.title << " ---\n"
              << step.explanation << "\n" << std::flush;
    nlohmann::json step_record{{"number", number}, {"title", step.title}, {"commands", nlohmann::json::array()},
                               {"findings", nlohmann::json::object()}};
    const double s0 = now_seconds();
    try {
      StepContext ctx(o, bin, number, step_record);
      step.body(ctx);
      step_record["status"] = "passed";
    } catch (const Error& e) {
      step_record["status"] = "failed";
      step_record["error"] = e.what();
      std::cerr << "error: " << name_ << " step " << number << ": " << e.what() << "\n";
      code = e.exit_code();
    }
    step_record["seconds"] = now_seconds() - s0;
    record["steps"].push_back(step_record);
    if (code != 0) break;
  }
  record["seconds"] = now_seconds() - t0;
  record["status"] = code == 0 ? "passed" : "failed";
  write_json_file(o.json, record);
  std::cout << "\n" << name_ << (code == 0 ? " finished" : " stopped") << " in "
            << static_cast<int>(now_seconds() - t0) << " s; record: " << o.json << "\n";
  return code;
}

}  // namespace scalelab::lab
