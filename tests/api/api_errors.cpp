// A program built on the public API that fails on purpose, for the end-to-end error tests
// (tests/api/CMakeLists.txt): each mode is one bad use, and run_main must turn it into one line
// on stderr and the right exit status, or, with several ranks, bring the whole job down.
//   api_errors no-runtime | runtime-twice | bad-model | bad-optimizer | rank1-throws | ok
#include <cstdio>
#include <stdexcept>
#include <string>

#include "scalelab/scalelab.h"

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  return scalelab::run_main([&] {
    if (mode == "no-runtime") return scalelab::rank();
    if (mode == "runtime-twice") {
      { scalelab::Runtime first; }
      scalelab::Runtime second;
    }
    scalelab::Runtime runtime;
    scalelab::Datasets data = scalelab::load_datasets({.name = "synthetic"});
    if (mode == "bad-model") scalelab::Model model("nope", data.train, 1);
    if (mode == "bad-optimizer") {
      scalelab::Model model("trivial", data.train, 1);
      scalelab::Optimizer sgd(model, "sgd", {.momentum = 1.5f});
    }
    if (mode == "rank1-throws") {
      if (scalelab::rank() == 1) throw std::runtime_error("rank 1 failed on purpose");
      scalelab::barrier();  // rank 0 would wait here forever if the job were not brought down
    }
    std::printf("%s done\n", mode.c_str());
    return 0;
  });
}
