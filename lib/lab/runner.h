// The step runner every lab executable shares (labs/labN/main.cpp). A lab is a list of steps;
// each step has a title, an explanation, and a body that runs real scalelab commands through
// StepContext::run: the command is printed as `$ scalelab ...` (so a student can rerun it by
// hand), run as a child process, its exit code checked and its --json output read back. At the
// end the lab writes one JSON record of every step: inputs, commands, exit codes, times, results,
// versions and the machine (docs/results-schema.md, "scalelab.lab").
//
//   lab::Lab lab("lab1", "One rank vs many");
//   lab.add_step({"Train on one rank", "We start with ...", [](lab::StepContext& ctx) {
//     const auto r = ctx.run({"train", "--model", "cnn", "--json", ctx.out("one.json")}, ctx.out("one.json"));
//     ctx.note("images_per_second", r["epochs"].back()["images_per_second"]);
//   }});
//   return lab.main(argc, argv);   // --quick, --step N, --json FILE, --out DIR, --ranks N,
                                 // --dataset NAME, --list
//
// The scalelab binary is $SCALELAB_BIN, else the `scalelab` beside the lab executable.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace scalelab::lab {

struct LabOptions {
  bool quick = false;        // the CI-affordable variant: fewer steps per epoch, same lessons
  int only_step = 0;         // 0: all steps; else just this one (1-based)
  std::string json;          // the lab's record; empty: <out>/<lab>.json
  std::string out_dir;       // where steps write their files; default "<lab>-out"
  int ranks = 2;             // the "N" of multi-rank steps
  std::string dataset = "fashion-mnist";  // passed to the training steps' --dataset
};

class StepContext;

struct Step {
  std::string title;
  std::string explanation;  // printed before the step runs, wrapped as written
  std::function<void(StepContext&)> body;
};

class StepContext {
 public:
  StepContext(const LabOptions& options, std::string scalelab_bin, int number, nlohmann::json& record);
  [[nodiscard]] const LabOptions& options() const { return options_; }
  [[nodiscard]] int number() const { return number_; }
  // A path inside the output folder.
  [[nodiscard]] std::string out(const std::string& name) const;
  // Runs `scalelab <args...>`, printing it first; a non-zero exit is a runtime error naming the
  // command. When `json_file` is given, returns its parsed content (else null).
  nlohmann::json run(const std::vector<std::string>& args, const std::string& json_file = "");
  // Reads a JSON file an earlier step wrote; if it is missing, says which step to run first.
  [[nodiscard]] nlohmann::json earlier(const std::string& json_file, int step) const;
  // Prints text (a finding, a question) and records findings under the step's "findings".
  void say(const std::string& text) const;
  void note(const std::string& key, const nlohmann::json& value);

 private:
  const LabOptions& options_;
  std::string bin_;
  int number_;
  nlohmann::json& record_;
};

class Lab {
 public:
  Lab(std::string name, std::string title);
  void add_step(Step step) { steps_.push_back(std::move(step)); }
  // Parses the options, runs the steps, writes the record. Returns the process exit code;
  // errors are printed as one line (2 for usage, 1 for a failed step).
  int main(int argc, char** argv);

 private:
  int run(const LabOptions& options, const std::vector<std::string>& argv);
  std::string name_;
  std::string title_;
  std::vector<Step> steps_;
};

// "$ scalelab train --model cnn": args quoted where the shell needs it.
[[nodiscard]] std::string shell_line(const std::vector<std::string>& args);
// The scalelab binary the labs run: $SCALELAB_BIN, else `scalelab` beside this executable.
[[nodiscard]] std::string find_scalelab_binary();

}  // namespace scalelab::lab
