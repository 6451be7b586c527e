// Grading one submission: copy its sources into a scratch folder, build them against an installed
// scalelab with the grader's own CMakeLists.txt (fixed flags: the submission's build files are not
// used), run the program with mpirun at 1 rank and at each graded rank count under limits
// (grade/sandbox.h), with the behaviour trace going to a file the grader opened and unlinked
// (SCALELAB_TRACE_FD=PID:N: no path the program could guess), and score the traces
// (grade/checks.h). The program is run as `train OUT_DIR`, each rank in a folder of its own in the
// scratch copy (run-N/rank-R), so that the files each rank wrote are known.
//
//   grade::GradeOptions o{.submission = "alice/", .prefix = "/opt/scalelab", .ranks = {1, 2, 3}};
//   grade::GradeReport r = grade::grade_submission(o, [](const std::string& line) { std::puts(line.c_str()); });
//
// Errors about the options name them as the library does (submission, prefix, ranks,
// time_limit, memory_limit, target); a failing build or run is a failed test, not an error.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "grade/results.h"

namespace scalelab::grade {

struct GradeOptions {
  std::string submission;                // the folder with the program's sources (train.cpp, ...)
  std::string prefix;                    // an installed scalelab (cmake --install); "" for default_prefix()
  std::vector<int> ranks{1, 2, 3};       // the rank counts graded (1 rank is always run too)
  double time_limit = 40;                // seconds per run (three runs that hang: 120 s); the build gets max(300, this)
  long memory_limit = 2048;              // MiB of address space per process; 0: none
  long disk_limit = 1024;                // MiB any file written, and each run's folder in all, may hold; 0: none
  double target = 0.80;                  // the test accuracy to reach
  std::string results_path;              // where results.json goes: watched, so that a program writing it is caught
  std::string mpiexec = "mpirun";        // Open MPI's launcher (found in $PATH when it has no '/')
  bool isolate_network = true;           // a network namespace of its own for the program, where permitted
  bool keep = false;                     // keep the scratch folder (its path is in the report's output)
};

// The installed scalelab the grader builds against by default: the prefix this scalelab binary
// was installed into (PREFIX/bin/scalelab beside PREFIX/lib/cmake/scalelab), else the build's
// CMAKE_INSTALL_PREFIX when one is installed there; "" when there is none.
[[nodiscard]] std::string default_prefix();

// Checks the options (the submission folder too, when `with_submission`); usage and input errors
// name them.
void check_options(const GradeOptions& options, bool with_submission = true);

// The source tree this scalelab was built from (what --package copies).
[[nodiscard]] std::string built_source_dir();

// Grades one submission. `progress` receives one line per phase (building, each run).
[[nodiscard]] GradeReport grade_submission(const GradeOptions& options,
                                           const std::function<void(const std::string&)>& progress = {});

}  // namespace scalelab::grade
