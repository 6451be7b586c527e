// End-to-end tests of `scalelab converge`, the real binary (SCALELAB_BIN_PATH):
//   - the large-batch lesson holds on a shortened run (4 epochs of the MLP on Fashion-MNIST; the
//     margins hold over seeds 1-4 and 42, docs/convergence-results.md):
//     (a) the naive 16x batch loses at least 3 points of test accuracy against the baseline,
//     (b) linear scaling with gradual warm-up comes back within 1 point,
//     (c) LAMB at a 32x batch stays within 1.5 points;
//   - `--from` redraws the table and the charts from the records;
//   - bad input is one line on stderr and exit 2.
// Skips the training tests (with the reason) when Fashion-MNIST is not installed.
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace {

namespace fs = std::filesystem;

struct Outcome {
  int code = -1;
  std::string out, err;
};

// Runs `scalelab <args>` through the shell, capturing stdout and stderr in files.
Outcome scalelab(const std::string& args, const fs::path& dir) {
  const fs::path out = dir / "stdout.txt", err = dir / "stderr.txt";
  const std::string cmd = std::string(SCALELAB_BIN_PATH) + " " + args + " >" + out.string() + " 2>" + err.string();
  const int status = std::system(cmd.c_str());
  Outcome o;
  o.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream so(out), se(err);
  o.out.assign(std::istreambuf_iterator<char>(so), {});
  o.err.assign(std::istreambuf_iterator<char>(se), {});
  return o;
}

fs::path scratch(const std::string& name) {
  const fs::path d = fs::temp_directory_path() / ("scalelab_converge_e2e_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

// Where scalelab itself looks: SCALELAB_DATA_DIR when set, else Debian's folder.
bool have_fashion_mnist() {
  const char* dir = std::getenv("SCALELAB_DATA_DIR");
  const fs::path d = dir != nullptr && *dir != '\0' ? fs::path(dir) : fs::path("/usr/share/datasets/fashion-mnist");
  for (const char* name : {"train-images-idx3-ubyte", "train-images.idx3-ubyte"}) {  // as lib/data/load.cpp finds them
    if (fs::exists(d / name) || fs::exists(d / (std::string(name) + ".gz"))) return true;
  }
  return false;
}

double final_accuracy(const nlohmann::json& doc, const std::string& name) {
  for (const auto& r : doc.at("configurations")) {
    if (r.at("name") == name) return r.at("final_test_accuracy").get<double>();
  }
  ADD_FAILURE() << "no configuration " << name;
  return 0;
}

TEST(ConvergeLesson, LargeBatchLosesAccuracyAndScalingWithWarmupAndLambRecoverIt) {
  if (!have_fashion_mnist()) GTEST_SKIP() << "Fashion-MNIST not installed (Debian package dataset-fashion-mnist)";
  const fs::path d = scratch("lesson");
  const Outcome o = scalelab("converge --model mlp --optimizer sgd --epochs 4 --base-batch 32 --scale 16 --layerwise-scale 32 --lr 0.01 "
                             "--warmup-epochs 1 --lr-schedule cosine --lamb-lr 0.02 --seed 42 --quiet "
                             "--configs baseline,naive,linear-warmup,lamb --charts " + (d / "charts").string() +
                                 " --json " + (d / "c.json").string(),
                             d);
  ASSERT_EQ(o.code, 0) << o.err;
  std::ifstream in(d / "c.json");
  const nlohmann::json doc = nlohmann::json::parse(in);
  ASSERT_TRUE(doc.at("complete").get<bool>());
  const auto& configs = doc.at("configurations");
  ASSERT_EQ(configs.size(), 4u);
  EXPECT_GE(configs[1].at("global_batch").get<int>(), 16 * configs[0].at("global_batch").get<int>());
  EXPECT_GT(configs[3].at("global_batch").get<int>(), configs[1].at("global_batch").get<int>());
  const double base = final_accuracy(doc, "baseline");
  const double naive = final_accuracy(doc, "naive");
  const double warm = final_accuracy(doc, "linear-warmup");
  const double lamb = final_accuracy(doc, "lamb");
  EXPECT_LE(naive, base - 0.03) << "(a) the naive large batch should lose at least 3 points";
  EXPECT_GE(warm, base - 0.01) << "(b) linear scaling + warm-up should come back within 1 point";
  EXPECT_GE(lamb, base - 0.015) << "(c) LAMB at a larger batch should stay within 1.5 points";
  // Time to the target is reported per configuration, and the table and charts are there.
  EXPECT_FALSE(configs[0].at("seconds_to_target").is_null());
  EXPECT_NE(o.out.find("time to"), std::string::npos) << o.out;
  for (const char* f : {"converge_accuracy_epoch.svg", "converge_accuracy_time.png", "converge_loss_epoch.svg",
                        "converge_loss_time.svg", "converge_loss_time.gp", "converge_loss_time.dat"}) {
    EXPECT_TRUE(fs::exists(d / "charts" / f)) << f;
  }
  // --from redraws the same table without training.
  const Outcome again = scalelab("converge --from " + (d / "c.json").string() + " --charts " + (d / "again").string(), d);
  ASSERT_EQ(again.code, 0) << again.err;
  EXPECT_NE(again.out.find("linear-warmup"), std::string::npos);
  EXPECT_TRUE(fs::exists(d / "again" / "converge_accuracy_epoch.png"));
  fs::remove_all(d);
}

struct BadInput {
  const char* args;
  const char* says;
};

TEST(ConvergeBadInput, EachIsOneLineAndExitTwo) {
  const fs::path d = scratch("bad");
  const BadInput cases[] = {
      {"--lr-schedule exponential", "cosine"},
      {"--warmup sudden", "gradual"},
      {"--optimizer adamw", "unknown optimizer"},
      {"--epochs 3 --warmup-epochs 4", "longer than training"},
      {"--lr 0", "positive"},
      {"--lr=-0.1", "positive"},
      {"--lamb-lr 0", "positive"},
      {"--micro-batch 24", "does not divide"},
      {"--configs baseline,bogus", "unknown configuration"},
      {"--experiment none --configs linear-warmup", "--warmup-epochs 0: a gradual warm-up needs a positive length"},
      {"--experiment fast", "--experiment fast: use course or none"},
      {"--momentum 1", "--momentum 1: give a momentum in [0, 1)"},
      {"--from /nonexistent/c.json", "/nonexistent/c.json"},
  };
  for (const auto& c : cases) {
    const Outcome o = scalelab(std::string("converge ") + c.args + " --charts ''", d);
    EXPECT_EQ(o.code, 2) << c.args << ": " << o.err;
    EXPECT_NE(o.err.find(c.says), std::string::npos) << c.args << ": " << o.err;
    EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << c.args << ": " << o.err;
  }
  const Outcome help = scalelab("converge --help", d);
  EXPECT_EQ(help.code, 0);
  EXPECT_NE(help.out.find("--target-accuracy"), std::string::npos);
  fs::remove_all(d);
}

}  // namespace
