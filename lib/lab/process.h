// Running a child process and waiting for it: how the lab runner and `scalelab scale` run other
// scalelab commands. The child inherits stdout and stderr, so its progress lines appear as it
// prints them.
#pragma once
#include <string>
#include <vector>

namespace scalelab::lab {

// Runs argv[0] (a path) with argv; returns its exit code, or 128 + the signal that ended it.
// A program that cannot be started is a runtime error naming it.
int run_process(const std::vector<std::string>& argv);

}  // namespace scalelab::lab
