// The documentation says only what is true of the tree: every repository path that README.md,
// docs/*.md, docs/labs/*.md and the code comments of apps/, lib/, labs/ and tests/ name exists,
// and every statement of a feature's GPU status agrees with docs/gpu-status.md. The rules
// (placeholders, the status form) are in doc_scan.h; the first tests below pin them on made-up
// text, the last ones apply them to the source tree CMake names (SCALELAB_SOURCE_DIR), so the
// test runs from any folder. tests/docs/ itself is not scanned: it quotes the forms it rejects.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "doc_scan.h"

namespace scalelab::docs {
namespace {
namespace fs = std::filesystem;

const fs::path kRoot = SCALELAB_SOURCE_DIR;

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string join(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines) out += "\n  " + l;
  return out;
}

// --- the rules, on made-up text ------------------------------------------------------------------

Tree small_tree() {
  Tree t;
  t.files = {"README.md", "apps/scalelab/cmd_train.cpp", "apps/scalelab/cmd_bench.cpp", "lib/core/error.h",
             "lib/data/sampler.h", "tests/collectives/ring_vs_mpi.cpp", "data/machines/dgx1.json", "docs/x.md"};
  t.dirs = {"apps", "apps/scalelab", "lib", "lib/core", "lib/data", "tests", "tests/collectives", "data",
            "data/machines", "docs"};
  t.lib_modules = {"core", "data"};
  return t;
}

TEST(DocRules, PathsAreWordsWithASlashWithoutSentencePunctuation) {
  const auto t = path_tokens("See docs/x.md. Then lib/core/error.h, and data/machines/...\nnot GB/s? yes `a/b`");
  ASSERT_EQ(t.size(), 5u);
  EXPECT_EQ(t[0].text, "docs/x.md");
  EXPECT_EQ(t[1].text, "lib/core/error.h");
  EXPECT_EQ(t[2].text, "data/machines/...");
  EXPECT_EQ(t[3].text, "GB/s");
  EXPECT_EQ(t[3].line, 2);
}

TEST(DocRules, ExistingFilesFoldersAndProgramsPass) {
  const Tree t = small_tree();
  EXPECT_EQ(check_path(t, "docs/x.md"), PathCheck::exists);
  EXPECT_EQ(check_path(t, "apps/scalelab/"), PathCheck::exists);
  EXPECT_EQ(check_path(t, "tests/collectives/ring_vs_mpi"), PathCheck::exists);  // built from ring_vs_mpi.cpp
  EXPECT_EQ(check_path(t, "core/error.h"), PathCheck::exists);                    // as code includes it
  EXPECT_EQ(check_path(t, "data/sampler.h"), PathCheck::exists);                  // lib/data/
  EXPECT_EQ(check_path(t, "data/machines/..."), PathCheck::exists);
}

TEST(DocRules, PlaceholdersNeedOneMatch) {
  const Tree t = small_tree();
  EXPECT_EQ(check_path(t, "apps/scalelab/cmd_<name>.cpp"), PathCheck::exists);
  EXPECT_EQ(check_path(t, "data/machines/*.json"), PathCheck::exists);
  EXPECT_EQ(check_path(t, "tests/<module>/"), PathCheck::exists);
  EXPECT_EQ(check_path(t, "apps/scalelab/verb_<name>.cpp"), PathCheck::missing);
}

TEST(DocRules, MissingPathsAreFound) {
  const Tree t = small_tree();
  EXPECT_EQ(check_path(t, "lib/sim"), PathCheck::missing);
  EXPECT_EQ(check_path(t, "model/gpu.h"), PathCheck::not_a_path);  // model is not a module of this tree
  Tree with_model = t;
  with_model.lib_modules.insert("model");
  EXPECT_EQ(check_path(with_model, "model/gpu.h"), PathCheck::missing);
  EXPECT_EQ(check_path(t, "docs/y.md"), PathCheck::missing);
}

TEST(DocRules, OtherPathsAreNotChecked) {
  const Tree t = small_tree();
  EXPECT_EQ(check_path(t, "src/graph/topo.h"), PathCheck::not_a_path);  // NCCL's, not ours
  EXPECT_EQ(check_path(t, "build/ci/bin/scalelab"), PathCheck::not_a_path);
  EXPECT_EQ(check_path(t, "//ui.perfetto.dev"), PathCheck::not_a_path);
  EXPECT_EQ(check_path(t, "GB/s"), PathCheck::not_a_path);
}

TEST(DocRules, CommentsOnlyAreReadFromCode) {
  const std::string code = "// see lib/a.h\nint x = 1; // and lib/b.h\nconst char* s = \"lib/c.h // no\";\n/* lib/d.h\n lib/e.h */\n";
  std::vector<std::string> words;
  for (const auto& tok : path_tokens(comments_of(code, ".cpp"))) words.push_back(tok.text + "@" + std::to_string(tok.line));
  EXPECT_EQ(words, (std::vector<std::string>{"lib/a.h@1", "lib/b.h@2", "lib/d.h@4", "lib/e.h@5"}));
  EXPECT_EQ(path_tokens(comments_of("set(X lib/a.h) # lib/b.h\n", ".txt")).size(), 1u);
}

const char* kStatusMd =
    "# GPU status\n\n## What has and has not been checked on a GPU\n\n"
    "| component | status | where |\n|---|---|---|\n"
    "| `scalelab bandwidth` | ran on one GPU only | lib/gpu |\n"
    "| GPUs of the detected machine (`topo --machine this`) | not run | lib/topo |\n\n## Next\n";

TEST(DocRules, TheStatusTableIsRead) {
  std::vector<std::string> problems;
  const auto table = gpu_status_table(kStatusMd, problems);
  EXPECT_TRUE(problems.empty()) << join(problems);
  EXPECT_EQ(table, (std::map<std::string, std::string>{{"scalelab bandwidth", "ran on one GPU only"},
                                                        {"topo --machine this", "not run"}}));
  std::vector<std::string> bad;
  (void)gpu_status_table("## What has and has not been checked on a GPU\n| c | status |\n|---|---|\n| `x` | maybe |\n", bad);
  EXPECT_EQ(bad.size(), 1u) << join(bad);
}

TEST(DocRules, StatusClaimsMustMatchTheTable) {
  std::vector<std::string> unused;
  const auto table = gpu_status_table(kStatusMd, unused);
  EXPECT_TRUE(gpu_status_problems("(GPU status (scalelab bandwidth): ran on one GPU only, docs/gpu-status.md)", table).empty());
  EXPECT_TRUE(gpu_status_problems("GPU status (`topo --machine this`): not run.", table).empty());
  EXPECT_EQ(gpu_status_problems("GPU status (scalelab bandwidth): not run", table).size(), 1u);  // the reverse
  EXPECT_EQ(gpu_status_problems("GPU status (topo --machine this): ran", table).size(), 1u);
  EXPECT_EQ(gpu_status_problems("GPU status (scalelab simulate): ran", table).size(), 1u);       // unknown name
  EXPECT_EQ(gpu_status_problems("GPU status (scalelab bandwidth): works", table).size(), 1u);    // malformed
}

TEST(DocRules, FreeFormClaimsAreRejected) {
  const std::map<std::string, std::string> table;
  for (const char* claim : {"(built with CUDA; not yet run on a GPU: docs/gpu-status.md)",
                            "Built and tested without a GPU; never yet run on one",
                            "The nccl backend has not run on a GPU yet", "Not run on a GPU yet (docs/gpu-status.md).",
                            "None of this has run on a GPU.", "its behaviour is unverified on a GPU"}) {
    EXPECT_EQ(gpu_status_problems(claim, table).size(), 1u) << claim;
  }
  EXPECT_TRUE(gpu_status_problems("What has run on which GPU: docs/gpu-status.md.", table).empty());
}

// --- the source tree ------------------------------------------------------------------------------

bool scanned_code(const fs::path& rel) {
  const std::string s = rel.generic_string();
  if (s.rfind("tests/docs/", 0) == 0) return false;
  const std::string ext = rel.extension().string();
  return ext == ".cpp" || ext == ".h" || ext == ".cu" || ext == ".cuh" || ext == ".py" || ext == ".sh" ||
         ext == ".cmake" || rel.filename() == "CMakeLists.txt";
}

std::vector<fs::path> markdown_files(const Tree& tree) {
  std::vector<fs::path> out{"README.md"};
  for (const auto& f : tree.files) {
    const fs::path p(f);
    if (p.extension() == ".md" && (p.parent_path() == "docs" || p.parent_path() == "docs/labs")) out.push_back(p);
  }
  return out;
}

std::vector<fs::path> code_files(const Tree& tree) {
  std::vector<fs::path> out;
  for (const auto& f : tree.files) {
    const fs::path p(f);
    const std::string top = *p.begin();
    if ((top == "apps" || top == "lib" || top == "labs" || top == "tests") && scanned_code(p)) out.push_back(p);
  }
  return out;
}

std::vector<std::string> missing_paths(const Tree& tree, const fs::path& rel, const std::string& text) {
  std::vector<std::string> out;
  for (const auto& tok : path_tokens(text)) {
    if (check_path(tree, tok.text) == PathCheck::missing) {
      out.push_back(rel.generic_string() + ":" + std::to_string(tok.line) + ": " + tok.text);
    }
  }
  return out;
}

TEST(Docs, EveryPathNamedInTheDocumentsExists) {
  const Tree tree = read_tree(kRoot);
  ASSERT_TRUE(tree.files.count("README.md")) << "no README.md under " << kRoot;
  std::vector<std::string> missing;
  for (const auto& md : markdown_files(tree)) {
    const auto found = missing_paths(tree, md, read(kRoot / md));
    missing.insert(missing.end(), found.begin(), found.end());
  }
  EXPECT_TRUE(missing.empty()) << "paths that are not in the repository:" << join(missing);
}

TEST(Docs, EveryPathNamedInCodeCommentsExists) {
  const Tree tree = read_tree(kRoot);
  std::vector<std::string> missing;
  const auto files = code_files(tree);
  ASSERT_GT(files.size(), 50u);
  for (const auto& f : files) {
    const auto found = missing_paths(tree, f, comments_of(read(kRoot / f), f.extension().string()));
    missing.insert(missing.end(), found.begin(), found.end());
  }
  EXPECT_TRUE(missing.empty()) << "paths that are not in the repository:" << join(missing);
}

TEST(Docs, GpuStatusTableIsWellFormed) {
  std::vector<std::string> problems;
  const auto table = gpu_status_table(read(kRoot / "docs/gpu-status.md"), problems);
  EXPECT_TRUE(problems.empty()) << "docs/gpu-status.md:" << join(problems);
  EXPECT_GE(table.size(), 5u);
}

TEST(Docs, GpuStatusClaimsMatchTheTable) {
  const Tree tree = read_tree(kRoot);
  std::vector<std::string> unused;
  const auto table = gpu_status_table(read(kRoot / "docs/gpu-status.md"), unused);
  std::vector<fs::path> files = markdown_files(tree);
  const auto code = code_files(tree);
  files.insert(files.end(), code.begin(), code.end());
  std::vector<std::string> problems;
  for (const auto& f : files) {
    if (f == "docs/gpu-status.md") continue;
    for (const auto& p : gpu_status_problems(read(kRoot / f), table)) problems.push_back(f.generic_string() + " " + p);
  }
  EXPECT_TRUE(problems.empty()) << "GPU status stated otherwise than in docs/gpu-status.md:" << join(problems);
}

}  // namespace
}  // namespace scalelab::docs
