// How `scalelab converge` reports a run that diverged (apps/scalelab/converge_report.h): it is
// found from its epochs (accuracy at chance to the last epoch), the table says "diverged" where a
// slow run says "never" and names it below, the charts draw it up to the epoch it diverged at and
// label it there, and records read back with --from get the field even when written without it.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "converge_report.h"
#include "core/error.h"

namespace scalelab::cli {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

json epochs(const std::vector<double>& accuracies) {
  json out = json::array();
  for (std::size_t i = 0; i < accuracies.size(); ++i) {
    out.push_back({{"epoch", i + 1}, {"train_seconds", 1.0 * (i + 1)}, {"test_accuracy", accuracies[i]},
                   {"test_loss", accuracies[i] < 0.2 ? 2.302585 : 1 - accuracies[i]}});
  }
  return out;
}

json record(const std::string& name, double lr, const std::vector<double>& accuracies) {
  const json e = epochs(accuracies);
  json ett = nullptr;
  for (const auto& x : e) {
    if (ett.is_null() && x["test_accuracy"].get<double>() >= 0.85) ett = x["epoch"];
  }
  return {{"name", name}, {"optimizer", "sgd"}, {"global_batch", 512}, {"workers", 16}, {"peak_lr", lr},
          {"epochs", e}, {"final_test_accuracy", accuracies.back()}, {"final_test_loss", e.back()["test_loss"]},
          {"train_seconds", 1.0 * accuracies.size()}, {"epochs_to_target", ett},
          {"seconds_to_target", ett.is_null() ? json(nullptr) : json(ett.get<double>())}};
}

// The charts after the first need gnuplot to have drawn the ones before them.
bool have_gnuplot() { return std::system("command -v gnuplot >/dev/null 2>&1") == 0; }

std::string read_all(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(ConvergeDiverged, FoundFromTheEpochsWhereAccuracyStaysAtChance) {
  EXPECT_TRUE(diverged_at_epoch(epochs({0.80, 0.85, 0.87})).is_null());
  EXPECT_TRUE(diverged_at_epoch(epochs({0.79, 0.81, 0.83})).is_null()) << "slow is not diverged";
  EXPECT_EQ(diverged_at_epoch(epochs({0.10, 0.10, 0.10})), 1);
  EXPECT_EQ(diverged_at_epoch(epochs({0.80, 0.10, 0.10})), 2);
  EXPECT_EQ(diverged_at_epoch(epochs({0.10, 0.50, 0.10})), 3) << "only the run's end counts";
  EXPECT_TRUE(diverged_at_epoch(epochs({0.10, 0.10, 0.50})).is_null()) << "a run that recovered did not diverge";
  EXPECT_TRUE(diverged_at_epoch(json::array()).is_null());
  json e = epochs({0.10, 0.10});
  e[1]["test_accuracy"] = nullptr;  // not evaluated at the end: nothing to go on
  EXPECT_TRUE(diverged_at_epoch(e).is_null());
  EXPECT_TRUE(diverged_at_epoch(json::array({{{"epoch", 1}}})).is_null()) << "no accuracy recorded";
  EXPECT_TRUE(diverged_at_epoch(json::object()).is_null());
}

TEST(ConvergeDiverged, TableSaysDivergedWhereASlowRunSaysNever) {
  const json records = json::array({record("baseline", 0.01, {0.83, 0.86, 0.88}), record("naive", 0.01, {0.80, 0.82, 0.83}),
                                     record("linear", 0.32, {0.10, 0.10, 0.10})});
  std::ostringstream out;
  print_converge_table(out, records, 0.85);
  const std::string t = out.str();
  std::istringstream lines(t);
  std::string line, naive, linear;
  while (std::getline(lines, line)) {
    if (line.find(" naive ") != std::string::npos) naive = line;
    if (line.find(" linear ") != std::string::npos) linear = line;
  }
  EXPECT_NE(naive.find("never"), std::string::npos) << t;
  EXPECT_EQ(naive.find("diverged"), std::string::npos) << t;
  EXPECT_NE(linear.find("diverged"), std::string::npos) << t;
  EXPECT_EQ(linear.find("never"), std::string::npos) << t;
  EXPECT_NE(t.find("# diverged (test accuracy below 20% to the last epoch"), std::string::npos) << t;
  EXPECT_NE(t.find("linear at lr 0.32 from epoch 1"), std::string::npos) << t;

  std::ostringstream quiet;
  print_converge_table(quiet, json::array({records[0], records[1]}), 0.85);
  EXPECT_EQ(quiet.str().find("diverged"), std::string::npos) << "no footnote without a diverged run";
}

TEST(ConvergeDiverged, ChartsDrawItUpToWhereItDivergedAndLabelIt) {
  const fs::path dir = fs::temp_directory_path() / ("scalelab_converge_report_" + std::to_string(getpid()));
  fs::remove_all(dir);
  const json records = json::array({record("baseline", 0.01, {0.83, 0.86, 0.88}), record("linear", 0.32, {0.60, 0.10, 0.10}),
                                     record("linear-warmup", 0.32, {0.80, 0.86, 0.88})});
  try {
    (void)write_converge_charts(records, dir.string());
  } catch (const Error&) {
    // No gnuplot here: the data and script of the first chart are written before it is needed.
  }
  const std::string dat = read_all(dir / "converge_accuracy_epoch.dat");
  const std::string gp = read_all(dir / "converge_accuracy_epoch.gp");
  EXPECT_NE(dat.find("# series 1: linear, lr 0.32 (batch 512, 16 workers): diverged at epoch 2\n1 60\n2 10\n\n\n"), std::string::npos) << dat;
  EXPECT_NE(dat.find("# series 2: linear-warmup, lr 0.32 (batch 512, 16 workers)\n1 80\n2 86\n3 88\n"), std::string::npos) << dat;
  EXPECT_NE(gp.find("baseline 88.00%, best large batch 88.00% (linear-warmup, batch 512)"), std::string::npos)
      << "the key figures in the title: " << gp;
  if (have_gnuplot()) {
    EXPECT_NE(read_all(dir / "converge_loss_epoch.gp").find("baseline 0.1200, best large batch 0.1200 (linear-warmup, batch 512)"),
              std::string::npos)
        << "the loss chart's title gives losses";
  }
  EXPECT_NE(gp.find("set label 2 'diverged' at 2, 10 "), std::string::npos) << gp;
  EXPECT_NE(gp.find("set xtics (1, 2, 3)\n"), std::string::npos) << "whole epochs only: " << gp;
  EXPECT_NE(gp.find("set key below"), std::string::npos) << gp;
  fs::remove_all(dir);
}

TEST(ConvergeCharts, TimeIsOnTheConfigurationsOwnDevicesAtLabOnesEfficiency) {
  const fs::path dir = fs::temp_directory_path() / ("scalelab_converge_time_" + std::to_string(getpid()));
  fs::remove_all(dir);
  json one = record("baseline", 0.01, {0.83, 0.86, 0.88});
  one["workers"] = 1;
  one["target_accuracy"] = 0.85;
  json many = record("linear-warmup", 0.16, {0.80, 0.86, 0.88});
  many["target_accuracy"] = 0.85;
  try {
    (void)write_converge_charts(json::array({one, many}), dir.string());
  } catch (const Error&) {
  }
  if (!have_gnuplot()) GTEST_SKIP() << "no gnuplot: only the first chart (against epoch) is written";
  const std::string dat = read_all(dir / "converge_accuracy_time.dat");
  const std::string gp = read_all(dir / "converge_accuracy_time.gp");
  // 1 worker: this machine's seconds; 16 emulated workers: 2 s here / (16 x 0.9) = 0.1389 s.
  EXPECT_NE(dat.find("# series 0: baseline, lr 0.01 (batch 512, 1 worker)\n1 83\n2 86\n3 88\n"), std::string::npos) << dat;
  EXPECT_DOUBLE_EQ(device_seconds(many, 2.0), 2.0 / (16 * kDeviceScalingEfficiency));
  EXPECT_NE(dat.find("\n0.1388888889 86\n"), std::string::npos) << dat;
  EXPECT_NE(gp.find("first to 85.0%: linear-warmup, 16 workers, 0.14 s"), std::string::npos) << gp;
  EXPECT_NE(gp.find("set logscale x 10"), std::string::npos) << "a log time axis: " << gp;
  fs::remove_all(dir);
}

TEST(ConvergeDiverged, RecordsReadBackGetTheField) {
  const fs::path file = fs::temp_directory_path() / ("scalelab_converge_from_" + std::to_string(getpid()) + ".json");
  json doc = {{"schema", "scalelab.converge"}, {"schema_version", 1},
              {"configurations", json::array({record("linear", 0.32, {0.10, 0.10}), record("baseline", 0.01, {0.83, 0.86})})}};
  std::ofstream(file) << doc.dump();
  const ConvergeRecords r = read_converge_records({file.string()}, 0.85);
  ASSERT_EQ(r.configurations.size(), 2u);
  EXPECT_EQ(r.configurations[0]["diverged_at_epoch"], 1);
  EXPECT_TRUE(r.configurations[1]["diverged_at_epoch"].is_null());
  fs::remove(file);
}

}  // namespace
}  // namespace scalelab::cli
