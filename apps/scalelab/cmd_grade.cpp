// `scalelab grade SUBMISSION_DIR`: the assessment's autograder (lib/grade): builds a submission
// against an installed scalelab, runs it at 1 rank and at each --ranks count under limits, grades
// what its behaviour trace shows, writes Gradescope's results.json and prints a summary table.
// `scalelab grade --batch DIR` grades every folder in DIR: a CSV of scores (--out) and each
// submission's results.json in a folder named after it beside the CSV.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "commands.h"
#include "flag_names.h"
#include "core/error.h"
#include "core/process.h"
#include "core/results.h"
#include "core/text.h"
#include "grade/grader.h"
#include "grade/package.h"

namespace scalelab::cli {
namespace {

// A CSV field, quoted when it holds a comma, a quote or a line break.
std::string csv(const std::string& text) {
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string out = "\"";
  for (char c : text) out += c == '"' ? std::string("\"\"") : std::string(1, c == '\n' ? ' ' : c);
  return out + "\"";
}

// Grades each folder of `dir` (sorted by name): one results.json each in OUT's folder/<name>/, and
// the CSV at `out`: submission, score, max_score, each test's score, time to accuracy, note.
int grade_batch(const std::string& dir, const std::string& out, grade::GradeOptions o) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw_parameter(ErrorKind::input, "batch", dir + ": not a folder: give the folder holding one folder per submission");
  std::vector<fs::path> subs, dangling;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind('.', 0) == 0) continue;
    std::error_code type_ec;
    if (e.is_directory(type_ec)) {
      subs.push_back(e.path());
    } else if (e.is_symlink(type_ec) && !std::filesystem::exists(e.path(), type_ec)) {
      dangling.push_back(e.path());  // a link to nothing: a row that says so, not a silent gap
    } else {
      std::fprintf(stderr, "grade: %s skipped: not a folder (each submission is a folder of its own)\n", name.c_str());
    }
  }
  std::sort(subs.begin(), subs.end());
  std::sort(dangling.begin(), dangling.end());
  if (subs.empty() && dangling.empty())
    throw_parameter(ErrorKind::input, "batch", dir + ": no submission folders in it: put each submission in a folder of its own there");
  const fs::path base = fs::absolute(out).parent_path();
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  for (const fs::path& sub : subs) {
    const std::string name = sub.filename().string();
    o.submission = sub.string();
    o.results_path = (base / name / "results.json").string();
    fs::create_directories(base / name);
    std::vector<std::string> row{name};
    std::fprintf(stderr, "grade: %s\n", name.c_str());
    try {
      const grade::GradeReport r = grade::grade_submission(o, [](const std::string& line) { std::fprintf(stderr, "  %s\n", line.c_str()); });
      write_json_file(o.results_path, grade::gradescope_results(r));
      if (header.empty()) {
        header = {"submission", "score", "max_score"};
        for (const auto& t : r.tests) header.push_back(t.name);
        header.insert(header.end(), {"time_to_accuracy_s", "note"});
      }
      char num[32];
      std::snprintf(num, sizeof num, "%.2f", r.score());
      row.push_back(num);
      std::snprintf(num, sizeof num, "%.2f", r.max_score());
      row.push_back(num);
      for (const auto& t : r.tests) {
        std::snprintf(num, sizeof num, "%.2f", t.score);
        row.push_back(num);
      }
      row.push_back("");
      for (const auto& l : r.leaderboard) {
        if (l.ascending) {
          std::snprintf(num, sizeof num, "%.1f", l.value);
          row.back() = num;
        }
      }
      row.push_back(r.integrity_ok ? "" : "integrity: score 0");
      std::printf("%-24s %6.2f / %.4g\n", name.c_str(), r.score(), r.max_score());
    } catch (const Error& e) {
      if (e.parameter() != "submission") throw;  // the same for every submission: stop
      row.push_back("0");
      row.push_back("");
      row.push_back(cli_message(e, "grade"));
      std::printf("%-24s not graded: %s\n", name.c_str(), cli_message(e, "grade").c_str());
    }
    rows.push_back(row);
  }
  for (const fs::path& link : dangling) {
    const std::string name = link.filename().string();
    const std::string note = "not graded: " + link.string() + " is a link to a folder that does not exist: fix or remove the link";
    std::printf("%-24s %s\n", name.c_str(), note.c_str());
    rows.push_back({name, "0", "", note});
  }
  if (header.empty()) header = {"submission", "score", "max_score", "note"};
  std::ofstream csv_file(out);
  for (std::size_t i = 0; i < header.size(); ++i) csv_file << (i ? "," : "") << csv(header[i]);
  csv_file << "\n";
  for (auto& row : rows) {
    // A submission not graded has its note in the last column.
    if (row.size() == 4 && header.size() > 4) row.insert(row.end() - 1, header.size() - 4, "");
    for (std::size_t i = 0; i < row.size(); ++i) csv_file << (i ? "," : "") << csv(row[i]);
    csv_file << "\n";
  }
  if (!csv_file) throw_input("--out " + out + ": cannot write the CSV: give a writable path");
  std::printf("scores: %s (%zu submissions); results.json of each in %s/<submission>/\n", out.c_str(), rows.size(), base.string().c_str());
  return 0;
}

}  // namespace

int cmd_grade(const Args& args) {
  po::options_description opts("scalelab grade options");
  opts.add_options()("submission", po::value<std::string>(), "the folder with the submission's sources")(
      "out", po::value<std::string>()->default_value("results.json"), "where to write Gradescope's results.json")(
      "ranks", po::value<std::string>()->default_value("1,2,3"), "the rank counts graded, comma-separated (1 rank is always run)")(
      "time-limit", po::value<double>()->default_value(40), "wall-time limit of each run, in seconds")(
      "memory-limit", po::value<long>()->default_value(2048), "address-space limit of each process, in MiB (0: none)")(
      "disk-limit", po::value<long>()->default_value(1024), "the most any file written, and each run's folder in all, may hold, in MiB (0: none)")(
      "target", po::value<double>()->default_value(0.80), "the test accuracy the program must reach")(
      "prefix", po::value<std::string>(), "the installed scalelab to build against (default: the one beside this scalelab)")(
      "keep", "keep the scratch folder (its path is printed)")(
      "batch", po::value<std::string>(), "grade every folder of this one: a CSV of scores at --out (default scores.csv)")(
      "package", po::value<std::string>(), "write Gradescope's autograder zip (setup.sh, run_autograder, scalelab's sources) with these options");
  po::positional_options_description pos;
  pos.add("submission", 1);
  const auto vm = parse(args,
                        "scalelab grade SUBMISSION_DIR [--out results.json] [--ranks 1,2,3] [--time-limit S] [--memory-limit MiB] [--disk-limit MiB]\n"
                        "scalelab grade --batch DIR [--out scores.csv] [...]\n"
                        "scalelab grade --package autograder.zip [--ranks ...] [--time-limit S] [--memory-limit MiB] [--target A]\n\n"
                        "Grades a data-parallel training program written with scalelab's C++ API (labs/assessment): builds its\n"
                        "sources against an installed scalelab with fixed flags, runs it (`train OUT_DIR`) with mpirun at 1 rank\n"
                        "and at each --ranks count under limits (wall time, memory, no network where the kernel allows it), and\n"
                        "scores what its behaviour trace shows it did, not what it printed. Writes Gradescope's results.json\n"
                        "and prints a summary table. docs/grading.md lists the tests.",
                        opts, &pos);
  if (!vm) return 0;
  const bool batch = vm->count("batch") > 0;
  const bool package = vm->count("package") > 0;
  if (package && (batch || vm->count("submission"))) usage_error(args, "--package writes the autograder zip: give it without SUBMISSION_DIR or --batch");
  // The zip's run_autograder grades on Gradescope with its own prefix, output and scratch folder.
  for (const char* ignored : {"prefix", "keep"}) {
    if (package && vm->count(ignored)) usage_error(args, std::string("--") + ignored + ": not part of the autograder zip (--package); leave it out");
  }
  if (package && !(*vm)["out"].defaulted()) usage_error(args, "--out: the autograder zip (--package) writes Gradescope's own results.json; leave it out");
  if (batch && vm->count("submission")) usage_error(args, "give either SUBMISSION_DIR or --batch DIR, not both");
  if (!batch && !package && !vm->count("submission")) usage_error(args, "give the submission's folder, e.g. scalelab grade labs/assessment/solution");
  const std::string out = batch && (*vm)["out"].defaulted() ? "scores.csv" : (*vm)["out"].as<std::string>();
  check_output_files(*vm, {"out", "package"});

  grade::GradeOptions o;
  if (!batch && !package) o.submission = (*vm)["submission"].as<std::string>();
  o.results_path = out;
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
  o.disk_limit = (*vm)["disk-limit"].as<long>();
  o.target = (*vm)["target"].as<double>();
  if (package) {
    grade::check_options(o, false);
    const std::string zip = (*vm)["package"].as<std::string>();
    grade::write_autograder_zip(zip, {.source_dir = grade::built_source_dir(), .ranks = o.ranks, .time_limit = o.time_limit,
                                      .memory_limit = o.memory_limit, .disk_limit = o.disk_limit, .target = o.target});
    std::printf("wrote %s: setup.sh, run_autograder, source/ (not tried on Gradescope itself: docs/grading.md)\n", zip.c_str());
    return 0;
  }
  if (vm->count("prefix")) o.prefix = (*vm)["prefix"].as<std::string>();
  o.keep = vm->count("keep") > 0;
  o.mpiexec = find_in_path("mpirun");
  if (o.mpiexec.empty()) throw_runtime("scalelab grade: mpirun is not in PATH: install Open MPI (tools/install-deps.sh)");
  if (batch) {
    // Written inside the batch folder, the grades would land in students' submissions.
    std::error_code ec;
    const std::filesystem::path folder = std::filesystem::weakly_canonical((*vm)["batch"].as<std::string>(), ec);
    const std::filesystem::path target = std::filesystem::weakly_canonical(std::filesystem::absolute(out), ec);
    const auto mismatch = std::mismatch(folder.begin(), folder.end(), target.begin(), target.end());
    if (!folder.empty() && mismatch.first == folder.end()) {
      usage_error(args, "--out " + out + ": inside the --batch folder, so the grades would go into the submissions; write them elsewhere");
    }
    return grade_batch((*vm)["batch"].as<std::string>(), out, o);
  }

  const grade::GradeReport report = grade::grade_submission(o, [](const std::string& line) {
    std::fprintf(stderr, "%s\n", line.c_str());
  });
  write_json_file(o.results_path, grade::gradescope_results(report));
  std::printf("%s\n%s", report.output.c_str(), grade::summary_table(report).c_str());
  std::printf("results: %s (%.0f s)\n", o.results_path.c_str(), report.execution_s);
  return 0;
}

}  // namespace scalelab::cli
