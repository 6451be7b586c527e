// The command line every lab executable shares: reads the flags into lab::LabOptions and runs the
// lab (lib/lab/runner.h). A lab's main() is its steps and one call:
//
//   int main(int argc, char** argv) {
//     scalelab::lab::Lab lab("lab1", "One rank vs many");
//     lab.add_step({"Train on one rank", "We start with ...", [](scalelab::lab::StepContext& ctx) {
//       const auto r = ctx.run({"train", "--model", "cnn", "--json", ctx.out("one.json")}, ctx.out("one.json"));
//       ctx.note("images_per_second", r["epochs"].back()["images_per_second"]);
//     }});
//     return scalelab::labs::lab_main(lab, argc, argv);
//   }
//
// Flags: --quick, --step N, --ranks N, --dataset NAME, --out DIR, --json FILE, --list, --help.
#pragma once
#include <string>
#include <string_view>

#include "lab/runner.h"

namespace scalelab::labs {

// Parses the flags, runs the lab and returns the process exit code: 0; 2 for a usage error (one
// line naming the flag); a failed step's code (one line naming the step).
int lab_main(const lab::Lab& lab, int argc, char** argv);

// The flag that sets a LabOptions member ("only_step" -> "--step"), or "" when none does.
[[nodiscard]] std::string lab_flag_for(std::string_view parameter);

// The one line a lab prints for `e`: what() with the flag in place of the parameter's name.
[[nodiscard]] std::string lab_message(const Error& e);

}  // namespace scalelab::labs
