// `scalelab grade SUBMISSION_DIR`: the assessment's autograder (lib/grade): builds a submission
// against an installed scalelab, runs it at 1 rank and at each --ranks count under limits, grades
// what its behaviour trace shows, writes Gradescope's results.json and prints a summary table.
#include <cstdio>
#include <string>

#include "commands.h"
#include "core/error.h"
#include "core/process.h"
#include "core/results.h"
#include "core/text.h"
#include "grade/grader.h"

namespace scalelab::cli {

int cmd_grade(const Args& args) {
  po::options_description opts("scalelab grade options");
  opts.add_options()("submission", po::value<std::string>(), "the folder with the submission's sources")(
      "out", po::value<std::string>()->default_value("results.json"), "where to write Gradescope's results.json")(
      "ranks", po::value<std::string>()->default_value("1,2,3"), "the rank counts graded, comma-separated (1 rank is always run)")(
      "time-limit", po::value<double>()->default_value(60), "wall-time limit of each run, in seconds")(
      "memory-limit", po::value<long>()->default_value(2048), "address-space limit of each process, in MiB (0: none)")(
      "target", po::value<double>()->default_value(0.80), "the test accuracy the program must reach")(
      "prefix", po::value<std::string>(), "the installed scalelab to build against (default: the one beside this scalelab)")(
      "keep", "keep the scratch folder (its path is printed)");
  po::positional_options_description pos;
  pos.add("submission", 1);
  const auto vm = parse(args,
                        "scalelab grade SUBMISSION_DIR [--out results.json] [--ranks 1,2,3] [--time-limit S] [--memory-limit MiB]\n\n"
                        "Grades a data-parallel training program written with scalelab's C++ API (labs/assessment): builds its\n"
                        "sources against an installed scalelab with fixed flags, runs it (`train OUT_DIR`) with mpirun at 1 rank\n"
                        "and at each --ranks count under limits (wall time, memory, no network where the kernel allows it), and\n"
                        "scores what its behaviour trace shows it did, not what it printed. Writes Gradescope's results.json\n"
                        "and prints a summary table. docs/grading.md lists the tests.",
                        opts, &pos);
  if (!vm) return 0;
  if (!vm->count("submission")) usage_error(args, "give the submission's folder, e.g. scalelab grade labs/assessment/solution");
  check_output_files(*vm, {"out"});

  grade::GradeOptions o;
  o.submission = (*vm)["submission"].as<std::string>();
  o.results_path = (*vm)["out"].as<std::string>();
  o.ranks.clear();
  for (const std::string& item : split_list((*vm)["ranks"].as<std::string>())) {
    std::size_t used = 0;
    int n = 0;
    try {
      n = std::stoi(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (item.empty() || used != item.size()) {
      throw_parameter(ErrorKind::usage, "ranks", (*vm)["ranks"].as<std::string>() + ": '" + item + "' is not a rank count: give counts such as 1,2,3");
    }
    o.ranks.push_back(n);
  }
  o.time_limit = (*vm)["time-limit"].as<double>();
  o.memory_limit = (*vm)["memory-limit"].as<long>();
  o.target = (*vm)["target"].as<double>();
  if (vm->count("prefix")) o.prefix = (*vm)["prefix"].as<std::string>();
  o.keep = vm->count("keep") > 0;
  o.mpiexec = find_in_path("mpirun");
  if (o.mpiexec.empty()) throw_runtime("scalelab grade: mpirun is not in PATH: install Open MPI (tools/install-deps.sh)");

  const grade::GradeReport report = grade::grade_submission(o, [](const std::string& line) {
    std::fprintf(stderr, "%s\n", line.c_str());
  });
  write_json_file(o.results_path, grade::gradescope_results(report));
  std::printf("%s\n%s", report.output.c_str(), grade::summary_table(report).c_str());
  std::printf("results: %s (%.0f s)\n", o.results_path.c_str(), report.execution_s);
  return 0;
}

}  // namespace scalelab::cli
