// The lab step runner (lab/runner.h): checking a lab's parameters, child processes, the lab's JSON record.
#include "lab/runner.h"

#include <signal.h>

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <iostream>
#include <vector>

#include "core/atomic_file.h"
#include "core/error.h"
#include "core/json_text.h"
#include "core/limits.h"
#include "core/output_path.h"
#include "core/process.h"
#include "core/results.h"
#include "core/timer.h"
#include "data/load.h"

namespace scalelab::lab {
namespace fs = std::filesystem;

namespace {

// The signals that stop a lab. While a command runs they are passed on to it (run_process); in
// between, note_stop notes the first, and the lab stops before its next command or step. Either
// way the lab writes its record and exits 128 + the signal, as a shell reports one it ended.
constexpr int kStopSignals[] = {SIGINT, SIGTERM, SIGHUP};
volatile std::sig_atomic_t g_stop = 0;

extern "C" void note_stop(int sig) {
  if (g_stop == 0) g_stop = sig;
}

// Thrown out of a step when a stop signal came; not an Error, so that no step's own handler takes it.
struct Interrupted {
  int signal;
};

// note_stop installed for the lab's run; the previous handlers restored after it.
class StopSignals {
 public:
  StopSignals() {
    g_stop = 0;
    struct sigaction sa {};
    sa.sa_handler = note_stop;
    sigemptyset(&sa.sa_mask);
    for (std::size_t i = 0; i < std::size(kStopSignals); ++i) sigaction(kStopSignals[i], &sa, &old_[i]);
  }
  ~StopSignals() {
    for (std::size_t i = 0; i < std::size(kStopSignals); ++i) sigaction(kStopSignals[i], &old_[i], nullptr);
  }
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

 private:
  struct sigaction old_[std::size(kStopSignals)] {};
};

std::string signal_name(int sig) {
  switch (sig) {
    case SIGINT: return "SIGINT";
    case SIGTERM: return "SIGTERM";
    case SIGHUP: return "SIGHUP";
    default: return "signal " + std::to_string(sig);
  }
}

// Why a command's result was measured on a contended machine (its "load" object's warning), or "".
std::string contention(const nlohmann::json& result) {
  if (!result.is_object() || !result.contains("load")) return {};
  const nlohmann::json& load = result.at("load");
  if (!load.is_object() || load.value("verdict", std::string()) != "contended") return {};
  return load.value("warning", std::string("a rank did not get its core"));
}

// A run of one step (--step N) over the record of an earlier run of the same lab, with the same
// --quick, --ranks, --dataset and --out: the earlier record's other steps are kept, step N's
// entry replaced, and the status covers every step the record then holds. Returns false (the
// record is written as it is) when there is no such earlier record.
bool keep_other_steps(const std::string& path, const std::string& lab, int step, nlohmann::json& record) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) return false;
  nlohmann::json earlier;
  try {
    earlier = read_json_file(path);
  } catch (const Error&) {
    return false;
  }
  if (!earlier.is_object() || earlier.value("schema", std::string()) != "scalelab.lab" ||
      earlier.value("lab", std::string()) != lab || !earlier.contains("steps") || !earlier["steps"].is_array() ||
      !earlier.contains("inputs") || !earlier["inputs"].is_object())
    return false;
  for (const char* key : {"quick", "ranks", "dataset", "out"})
    if (!earlier["inputs"].contains(key) || earlier["inputs"][key] != record["inputs"][key]) return false;
  nlohmann::json steps = nlohmann::json::array();
  for (const auto& s : earlier["steps"]) {
    // A step damaged since (a status that is not one of the three) makes the record one to replace.
    if (!s.is_object() || !s.contains("status") || !s["status"].is_string()) return false;
    const std::string status = s["status"].get<std::string>();
    if (status != "passed" && status != "failed" && status != "unreliable") return false;
    if (s.contains("number") && s["number"].is_number_integer() && s["number"].get<int>() != step) steps.push_back(s);
  }
  for (const auto& s : record["steps"]) steps.push_back(s);
  std::stable_sort(steps.begin(), steps.end(),
                   [](const nlohmann::json& a, const nlohmann::json& b) { return a["number"].get<int>() < b["number"].get<int>(); });
  bool failed = false;
  std::vector<int> unreliable;
  for (const auto& s : steps) {
    const std::string status = s.value("status", std::string());
    failed = failed || status == "failed";
    if (status == "unreliable") unreliable.push_back(s["number"].get<int>());
  }
  record["steps"] = steps;
  record["status"] = failed ? "failed" : unreliable.empty() ? "passed" : "unreliable";
  record["unreliable_steps"] = unreliable;
  return true;
}

}  // namespace

std::string shell_line(const std::vector<std::string>& args) {
  std::string line = "$ scalelab";
  for (const auto& a : args) {
    const bool plain = !a.empty() && a.find_first_of(" \t\"'$\\*?;&|<>()") == std::string::npos;
    line += " " + (plain ? a : "'" + a + "'");
  }
  return line;
}

StepContext::StepContext(const LabOptions& options, std::string scalelab_bin, int number, nlohmann::json& record,
                         bool timed)
    : options_(options), bin_(std::move(scalelab_bin)), number_(number), record_(record), timed_(timed) {}

void StepContext::mark_contended(const std::string& what, const nlohmann::json& result) const {
  const std::string why = contention(result);
  if (why.empty()) return;
  if (!timed_) {
    std::cout << "(Measured beside other processes; this step's lesson does not depend on timings.)\n"
              << std::flush;
    return;
  }
  record_["unreliable"].push_back(what + ": " + why);
  std::cout << "Unreliable: " << what << " was measured while other processes took the CPU (" << why << ")\n"
            << std::flush;
}

std::string StepContext::out(const std::string& name) const { return (fs::path(options_.out_dir) / name).string(); }

nlohmann::json StepContext::run(const std::vector<std::string>& args, const std::string& json_file) {
  if (g_stop != 0) throw Interrupted{g_stop};
  const std::string line = shell_line(args);
  std::cout << "\n" << line << "\n" << std::flush;
  std::vector<std::string> full{bin_};
  full.insert(full.end(), args.begin(), args.end());
  if (!json_file.empty() && !options_.json.empty()) {
    std::error_code ec;
    if (fs::weakly_canonical(fs::absolute(json_file), ec) == fs::weakly_canonical(fs::absolute(options_.json), ec)) {
      throw_parameter(ErrorKind::usage, "json",
                      options_.json + ": is the file step " + std::to_string(number_) +
                          " writes, and the lab's record would replace it; give the record another path");
    }
  }
  if (!json_file.empty()) fs::remove(json_file);  // a stale file must not pass for this run's
  const double t0 = now_seconds();
  int forwarded = 0;
  const int code = run_process(full, "", /*forward_signals=*/true, &forwarded);  // stopping the lab stops its command
  const double seconds = now_seconds() - t0;
  nlohmann::json entry{{"command", line.substr(2)}, {"argv", args}, {"exit_code", code}, {"seconds", seconds}};
  nlohmann::json result;
  if (code == 0 && !json_file.empty()) {
    result = read_json_file(json_file);
    stamp(json_file);
    entry["json_file"] = json_file;
    entry["result"] = result;
  }
  record_["commands"].push_back(entry);
  mark_contended(std::string("'").append(line, 2).append("'"), result);
  if (forwarded != 0) throw Interrupted{forwarded};
  if (code != 0) {
    // The lab exits as the command did: 2 for input the command refused (a missing or damaged
    // data set), 1 for a failure. The caller names the lab and the step.
    std::string message = "'";
    message.append(line, 2).append("' exited with code ").append(std::to_string(code)).append("; its output above says why");
    throw Error(code == 2 ? ErrorKind::input : ErrorKind::runtime, message);
  }
  return result;
}

namespace {

// The options a step's file was made with, kept beside the files (<out>/.lab-files.json, one entry
// per file name): a later step reads only files made by this lab's step with its own options.
nlohmann::json made_with(const LabOptions& o, int step) {
  return {{"step", step}, {"quick", o.quick}, {"ranks", o.ranks}, {"dataset", o.dataset}};
}

std::string stamps_path(const LabOptions& o) { return (fs::path(o.out_dir) / ".lab-files.json").string(); }

nlohmann::json read_stamps(const LabOptions& o) {
  std::error_code ec;
  if (!fs::is_regular_file(stamps_path(o), ec)) return nlohmann::json::object();
  try {
    nlohmann::json j = read_json_file(stamps_path(o));
    return j.is_object() ? j : nlohmann::json::object();
  } catch (const Error&) {
    return nlohmann::json::object();  // damaged: every earlier file then counts as unknown
  }
}

}  // namespace

void StepContext::stamp(const std::string& json_file) const {
  nlohmann::json stamps = read_stamps(options_);
  stamps[fs::path(json_file).filename().string()] = made_with(options_, number_);
  write_file_atomically(stamps_path(options_), stamps.dump(1) + "\n", "out_dir");
}

nlohmann::json StepContext::earlier(const std::string& json_file, int step) const {
  const std::string again = "; run step " + std::to_string(step) + " again, with the same output folder and options";
  if (!fs::exists(json_file)) {
    throw_parameter(ErrorKind::usage, "only_step",
                    std::to_string(number_) + ": it reads " + json_file + ", which is missing; run step " +
                        std::to_string(step) + " first, with the same output folder");
  }
  // Made by that step with these options? Another run's file (other data, --quick, --ranks, or an
  // older scalelab) would be compared as if it were this run's.
  const nlohmann::json stamps = read_stamps(options_);
  const std::string name = fs::path(json_file).filename().string();
  if (!stamps.contains(name)) {
    throw_parameter(ErrorKind::usage, "only_step",
                    std::to_string(number_) + ": " + json_file + " was not made by step " + std::to_string(step) + " of this lab" + again);
  }
  const nlohmann::json& made = stamps[name];
  const nlohmann::json now = made_with(options_, step);
  // "--quick", "--ranks 2", "--dataset synthetic": an option as the command line gives it.
  const auto spelled = [](const char* key, const nlohmann::json& v) -> std::string {
    if (v.is_boolean()) return v.get<bool>() ? "--quick" : "no --quick";
    return std::string("--") + key + " " + (v.is_string() ? v.get<std::string>() : v.dump());
  };
  for (const char* key : {"quick", "ranks", "dataset"}) {
    if (!made.contains(key) || made[key] != now[key]) {
      throw_parameter(ErrorKind::usage, "only_step",
                      std::to_string(number_) + ": " + json_file + " was made with " +
                          (made.contains(key) ? spelled(key, made[key]) : std::string("other options")) +
                          ", this run has " + spelled(key, now[key]) + again);
    }
  }
  nlohmann::json doc = read_json_file(json_file);
  if (doc.is_object() && doc.contains("complete") && doc["complete"] == false) {
    throw_parameter(ErrorKind::usage, "only_step",
                    std::to_string(number_) + ": " + json_file + " is from a run that did not finish (interrupted?)" + again);
  }
  mark_contended(json_file, doc);
  return doc;
}

void StepContext::say(const std::string& text) const { std::cout << text << "\n" << std::flush; }

void StepContext::note(const std::string& key, const nlohmann::json& value) { record_["findings"][key] = value; }

const nlohmann::json& StepContext::last_of(const nlohmann::json& doc, const char* key, const std::string& json_file) {
  if (!doc.is_object() || !doc.contains(key) || !doc[key].is_array() || doc[key].empty()) {
    throw_input(json_file + ": its \"" + key + "\" list is missing or empty; run the step that writes it again");
  }
  return doc[key].back();
}

bool StepContext::unreliable() const { return record_.contains("unreliable") && !record_["unreliable"].empty(); }

Lab::Lab(std::string name, std::string title) : name_(std::move(name)), title_(std::move(title)) {}

bool Lab::uses(const std::string& shared_option) const {
  return std::find(uses_.begin(), uses_.end(), shared_option) != uses_.end();
}

LabOptions Lab::checked(LabOptions o) const {
  const int steps = static_cast<int>(steps_.size());
  if (o.only_step < 0 || o.only_step > steps) {
    throw_parameter(ErrorKind::usage, "only_step",
                    std::to_string(o.only_step) + ": this lab has steps 1.." + std::to_string(steps) + " (0: all)");
  }
  if (o.ranks < 2) {
    throw_parameter(ErrorKind::usage, "ranks", std::to_string(o.ranks) + ": the multi-rank steps need at least 2");
  }
  if (o.ranks > limits::max_local_ranks()) {
    throw_parameter(ErrorKind::usage, "ranks",
                    std::to_string(o.ranks) + ": at most " + std::to_string(limits::max_local_ranks()) +
                        " ranks on this machine (" + limits::machine_bound_basis(limits::kRanksPerHardwareThread) + ")");
  }
  if (uses("dataset")) data::check_dataset_name(o.dataset);
  if (o.out_dir.empty()) o.out_dir = name_ + "-out";
  if (o.json.empty()) o.json = (fs::path(o.out_dir) / (name_ + ".json")).string();
  return o;
}

int Lab::run(const LabOptions& options, const std::vector<std::string>& command,
             const std::function<std::string(const Error&)>& describe) const {
  const LabOptions o = checked(options);
  const std::string bin = scalelab_binary();
  fs::create_directories(o.out_dir);
  // The record and the files' stamps are written after the steps: their places are checked now,
  // the default record path too, so that a run is not lost at its end to a folder or FIFO there.
  check_output_file("json", o.json);
  check_output_file("out_dir", stamps_path(o));
  nlohmann::json record = make_envelope("lab", 1, command);
  record["lab"] = name_;
  record["title"] = title_;
  record["inputs"] = {{"quick", o.quick}, {"step", o.only_step}, {"ranks", o.ranks}, {"dataset", o.dataset},
                     {"out", o.out_dir}};
  record["scalelab_binary"] = bin;
  record["steps"] = nlohmann::json::array();
  const double t0 = now_seconds();
  std::cout << "=== " << name_ << ": " << title_ << (o.quick ? " (quick)" : "") << " ===\n";
  int code = 0;
  int stopped_by = 0;  // the signal that stopped the lab, if one did
  const StopSignals stop_signals;
  std::vector<int> unreliable_steps;
  for (std::size_t i = 0; i < steps_.size(); ++i) {
    const int number = static_cast<int>(i) + 1;
    if (o.only_step != 0 && o.only_step != number) continue;
    if (g_stop != 0) {
      stopped_by = g_stop;
      code = 128 + stopped_by;
      break;
    }
    const Step& step = steps_[i];
    std::cout << "\n--- Step " << number << "/" << steps_.size() << ": " << step.title << " ---\n"
              << step.explanation << "\n" << std::flush;
    nlohmann::json step_record{{"number", number}, {"title", step.title}, {"timed", step.timed},
                               {"commands", nlohmann::json::array()}, {"findings", nlohmann::json::object()}};
    const double s0 = now_seconds();
    try {
      StepContext ctx(o, bin, number, step_record, step.timed);
      step.body(ctx);
      step_record["status"] = ctx.unreliable() ? "unreliable" : "passed";
      if (ctx.unreliable()) {
        unreliable_steps.push_back(number);
        std::cout << "\nStep " << number << " is unreliable, not passed: it measured while a rank did not get its "
                     "core, so its numbers describe the other processes on this machine, not the lesson\n"
                  << std::flush;
      }
    } catch (const Error& e) {
      const std::string message = describe ? describe(e) : std::string(e.what());
      step_record["status"] = "failed";
      step_record["error"] = message;
      std::cerr << "error: " << name_ << " step " << number << ": " << message << "\n";
      code = e.exit_code();
    } catch (const Interrupted& stop) {
      stopped_by = stop.signal;
      step_record["status"] = "failed";
      step_record["error"] = "stopped by " + signal_name(stop.signal);
      std::cerr << "error: " << name_ << " step " << number << ": stopped by " << signal_name(stop.signal) << "\n";
      code = 128 + stop.signal;
    } catch (const nlohmann::json::exception& e) {
      // A record without what the step reads (from another kind of run, or damaged by hand).
      const std::string message = std::string("a file it reads lacks what it needs (") + plain_json_error(e) +
                                  "); run the earlier steps again with the same output folder";
      step_record["status"] = "failed";
      step_record["error"] = message;
      std::cerr << "error: " << name_ << " step " << number << ": " << message << "\n";
      code = 2;
    }
    step_record["seconds"] = now_seconds() - s0;
    record["steps"].push_back(step_record);
    if (code != 0) break;
  }
  record["seconds"] = now_seconds() - t0;
  record["status"] = code != 0 ? "failed" : unreliable_steps.empty() ? "passed" : "unreliable";
  record["unreliable_steps"] = unreliable_steps;
  if (stopped_by != 0) record["stopped_by"] = signal_name(stopped_by);
  const bool kept = o.only_step != 0 && keep_other_steps(o.json, name_, o.only_step, record);
  write_json_file(o.json, record);
  std::cout << "\n" << name_ << (code == 0 ? " finished" : " stopped")
            << (stopped_by != 0 ? " by " + signal_name(stopped_by) : std::string()) << " in "
            << static_cast<int>(now_seconds() - t0) << " s; record: " << o.json
            << (kept ? " (with the other steps of the earlier run it held)" : "") << "\n";
  if (!unreliable_steps.empty()) {
    std::string list;
    for (const int n : unreliable_steps) list += (list.empty() ? "" : ", ") + std::to_string(n);
    std::cout << name_ << ": step" << (unreliable_steps.size() == 1 ? " " : "s ") << list
              << " measured while other processes took the CPU, so "
              << (unreliable_steps.size() == 1 ? "its numbers are" : "their numbers are")
              << " unreliable and do not show the lessons; rerun when `uptime` shows a load average well below this "
                 "machine's cores\n";
  }
  return code;
}

}  // namespace scalelab::lab
