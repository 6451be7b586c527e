// Gradescope's autograder package (`scalelab grade --package autograder.zip`): a zip holding
// setup.sh (run once by Gradescope to build its image: the Debian/Ubuntu packages scalelab needs,
// then scalelab built from the packaged sources and installed into /opt/scalelab), run_autograder
// (run for each submission: `scalelab grade /autograder/submission --out
// /autograder/results/results.json` with the grading options given here) and source/ (this
// scalelab's source tree). Not tried on Gradescope itself (docs/grading.md).
//
//   grade::write_autograder_zip("autograder.zip", {.source_dir = SOURCE, .ranks = {1, 2, 3}, .time_limit = 40});
#pragma once
#include <string>
#include <vector>

namespace scalelab::grade {

struct PackageOptions {
  std::string source_dir;          // scalelab's source tree (its CMakeLists.txt at the top)
  std::vector<int> ranks{1, 2, 3};
  double time_limit = 40;
  long memory_limit = 2048;
  long disk_limit = 1024;
  double target = 0.80;
};

// The two scripts as written into the package (for tests and docs).
[[nodiscard]] std::string setup_script();
[[nodiscard]] std::string run_autograder_script(const PackageOptions& options);

// Writes the zip (through `cmake -E tar --format=zip`). Input errors name source_dir or out.
void write_autograder_zip(const std::string& out, const PackageOptions& options);

}  // namespace scalelab::grade
