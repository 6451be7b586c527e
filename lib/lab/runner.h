// The step runner every lab executable shares (labs/lab<N>/main.cpp). A lab is a list of steps;
// each step has a title, an explanation, and a body that runs real scalelab commands through
// StepContext::run: the command is printed as `$ scalelab ...` (so a student can rerun it by
// hand), run as a child process, its exit code checked and its JSON output read back. At the
// end the lab writes one JSON record of every step: inputs, commands, exit codes, times, results,
// versions and the machine (docs/results-schema.md, "scalelab.lab").
//
// A command whose JSON says a rank did not get its core (its "load" verdict is "contended") makes
// its step "unreliable" instead of "passed": the lab says so after the command, at the end of the
// step and in its last line, since numbers measured beside other processes teach the wrong lesson.
//
// This library knows a lab's parameters (LabOptions) by their own names; errors about one name it
// that way (core/error.h's throw_parameter: "only_step 9: ..."). Reading them from a command
// line, and the flags that set them, belong to the lab executables (labs/common/lab_main.h,
// which also shows a whole lab in a few lines).
//
// The scalelab binary is $SCALELAB_BIN, else the `scalelab` beside the lab executable
// (core/process.h, scalelab_binary).
#pragma once
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/error.h"

namespace scalelab::lab {

// A lab's parameters; each member's name is the name errors use for it.
struct LabOptions {
  bool quick = false;        // the CI-affordable variant: fewer steps per epoch, same lessons
  int only_step = 0;         // 0: all steps; else just this one (1-based)
  std::string json;          // the lab's record; empty: <out_dir>/<lab>.json
  std::string out_dir;       // where steps write their files; empty: "<lab>-out"
  int ranks = 2;             // the "N" of multi-rank steps, at least 2
  std::string dataset = "fashion-mnist";  // the dataset of the training steps
};

class StepContext;

struct Step {
  std::string title;
  std::string explanation;  // printed before the step runs, wrapped as written
  std::function<void(StepContext&)> body;
  // Its lesson rests on timings: a command or an earlier file measured on a contended machine
  // makes it unreliable. false for lessons that timings cannot change (test accuracy).
  bool timed = true;
};

class StepContext {
 public:
  StepContext(const LabOptions& options, std::string scalelab_bin, int number, nlohmann::json& record,
              bool timed = true);
  [[nodiscard]] const LabOptions& options() const { return options_; }
  [[nodiscard]] int number() const { return number_; }
  // A path inside the output folder.
  [[nodiscard]] std::string out(const std::string& name) const;
  // Runs `scalelab <args...>`, printing it first; a non-zero exit is a runtime error naming the
  // command. When `json_file` is given, returns its parsed content (else null); when that says
  // the machine was contended, a timed step becomes unreliable (unreliable()).
  nlohmann::json run(const std::vector<std::string>& args, const std::string& json_file = "");
  // Reads a JSON file an earlier step wrote; if it is missing, says which step to run first. A
  // file measured on a contended machine makes a timed step unreliable too.
  // It must have been made by that step of this lab with the same --quick, --ranks and --dataset
  // (the lab notes each file it makes in <out>/.lab-files.json) and be complete.
  [[nodiscard]] nlohmann::json earlier(const std::string& json_file, int step) const;
  // The last element of doc[key] (a record's "epochs", "rows"), or an input error naming
  // json_file when the list is missing or empty (a record damaged since, or cut short).
  [[nodiscard]] static const nlohmann::json& last_of(const nlohmann::json& doc, const char* key, const std::string& json_file);
  // Prints text (a finding, a question) and records findings under the step's "findings".
  void say(const std::string& text) const;
  void note(const std::string& key, const nlohmann::json& value);
  // True once a command of this step measured on a contended machine.
  [[nodiscard]] bool unreliable() const;

 private:
  const LabOptions& options_;
  std::string bin_;
  int number_;
  nlohmann::json& record_;
  bool timed_;
  // Records `what` (a command or file) as measured on a contended machine, when this step is timed.
  void mark_contended(const std::string& what, const nlohmann::json& result) const;
  void stamp(const std::string& json_file) const;  // notes that this step made json_file, with these options
};

class Lab {
 public:
  Lab(std::string name, std::string title);
  void add_step(Step step) { steps_.push_back(std::move(step)); }
  // The shared options ("ranks", "dataset") this lab's steps read; the lab's command line offers
  // only these, so a flag the lab would ignore is an error. Both by default.
  void uses(std::vector<std::string> shared_options) { uses_ = std::move(shared_options); }
  [[nodiscard]] bool uses(const std::string& shared_option) const;
  [[nodiscard]] const std::string& name() const { return name_; }
  [[nodiscard]] const std::string& title() const { return title_; }
  [[nodiscard]] const std::vector<Step>& steps() const { return steps_; }
  // `options` with its defaults filled in (out_dir, json) after checking it: a usage error naming
  // the parameter (only_step beyond the steps, ranks below 2).
  [[nodiscard]] LabOptions checked(LabOptions options) const;
  // Runs the steps `options` selects (checked() first) and writes the record, `command` being the
  // command line recorded in it. Returns the exit code: 0, or a failed step's error's; that error
  // is printed on stderr as one line, written by `describe` when given (a front end puts its flag
  // in place of a parameter's name), else what(). Errors before the first step (options, the
  // scalelab binary) are thrown.
  int run(const LabOptions& options, const std::vector<std::string>& command,
          const std::function<std::string(const Error&)>& describe = {}) const;

 private:
  std::string name_;
  std::string title_;
  std::vector<Step> steps_;
  std::vector<std::string> uses_{"ranks", "dataset"};
};

// "$ scalelab train --model cnn": args quoted where the shell needs it.
[[nodiscard]] std::string shell_line(const std::vector<std::string>& args);

}  // namespace scalelab::lab
