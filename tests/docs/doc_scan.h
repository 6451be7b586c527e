// The rules the documentation tests (test_docs.cpp) apply, as functions small enough to test on
// made-up text.
//
// Repository paths. A path is a run of path characters (letters, digits, _ . / - + * < >) whose
// first component is a top-level folder of the repository (apps, lib, labs, tests, docs, data,
// tools, cmake, include), or a module of lib/ when the path ends in a source file (.h, .cpp, .cu,
// .cuh): "core/error.h" is lib/core/error.h, as code includes it. Anything else (URLs, other
// projects' paths such as NCCL's src/graph/topo.h, build/ outputs, /tmp) is not checked.
// Trailing sentence punctuation (. ,) is not part of a path. A path exists when:
//   - it names a file or a folder of the source tree (a trailing / is allowed);
//   - or it names a program built from a source of the same stem in that folder
//     (tests/collectives/ring_vs_mpi for ring_vs_mpi.cpp);
//   - or, with placeholders, at least one file or folder matches: * stands for any characters
//     within a component, <anything> for one or more (cmd_<name>.cpp, tests/<module>/), and a
//     trailing ... or /... for what follows (data/machines/...).
// A path under data/ may also be read as under lib/data/ (both exist).
//
// GPU status. docs/gpu-status.md's table "What has and has not been checked on a GPU" gives each
// feature (the first `name` in backquotes of a row's first cell) one status: "ran", "ran on one
// GPU only" or "not run". Anywhere else a status is stated, on one line, as
// "GPU status (<name>): <status>", with the table's name and status. Free-form claims that a
// feature has not run on a GPU ("not yet run on a GPU", "never run on one", "none of this has
// run", "unverified on a GPU") are rejected, so the only statements are the checked ones.
#pragma once
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace scalelab::docs {

// The files and folders of a source tree, relative to its root ("lib/core/error.h", "lib/core"),
// leaving out hidden entries and top-level build* folders.
struct Tree {
  std::set<std::string> files;
  std::set<std::string> dirs;
  std::set<std::string> lib_modules;  // the folders of lib/
};
[[nodiscard]] Tree read_tree(const std::filesystem::path& root);

// A path-like word and the line it is on (1-based).
struct Token {
  std::string text;
  int line = 0;
};
[[nodiscard]] std::vector<Token> path_tokens(std::string_view text);

// The comments of a source file, everything else blanked out but the line breaks, so line
// numbers stay right: // and /* */ for C++ and CUDA, # for CMake, shell and Python (and Python's
// module docstring).
[[nodiscard]] std::string comments_of(std::string_view text, std::string_view extension);

// Whether `token` is a repository path (above) and, if so, whether it exists in `tree`.
enum class PathCheck { not_a_path, exists, missing };
[[nodiscard]] PathCheck check_path(const Tree& tree, const std::string& token);

// The table of docs/gpu-status.md: feature name -> status. Problems with the table (a row
// without a name, an unknown status, no table) go to `problems`.
[[nodiscard]] std::map<std::string, std::string> gpu_status_table(std::string_view gpu_status_md,
                                                                   std::vector<std::string>& problems);

// The GPU-status problems of one text: a tagged claim with an unknown name, a status other than
// the table's, a malformed tag, or a free-form claim. Each problem is "line N: ...".
[[nodiscard]] std::vector<std::string> gpu_status_problems(std::string_view text,
                                                           const std::map<std::string, std::string>& table);

}  // namespace scalelab::docs
