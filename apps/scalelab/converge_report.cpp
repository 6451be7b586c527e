// Records, table and charts of `scalelab converge` (see converge_report.h).
#include "converge_report.h"

#include <filesystem>

#include <fmt/format.h>

#include "report/chart.h"
#include "report/table.h"

namespace scalelab::cli {

nlohmann::json converge_record(const ConvergeRun& run, const optim::LrSchedule& schedule,
                               const train::TrainConfig& config, const train::TrainResult& result,
                               double target_accuracy) {
  nlohmann::json epochs = nlohmann::json::array();
  double train_seconds = 0;
  nlohmann::json epochs_to_target = nullptr;
  nlohmann::json seconds_to_target = nullptr;
  for (const auto& e : result.epochs) {
    train_seconds += e.seconds;
    nlohmann::json j = e;
    j["train_seconds"] = train_seconds;  // cumulative, evaluation excluded
    epochs.push_back(j);
    if (epochs_to_target.is_null() && e.test_accuracy >= target_accuracy) {
      epochs_to_target = e.epoch;
      seconds_to_target = train_seconds;
    }
  }
  const auto& last = result.epochs.back();
  return {{"name", run.name},
          {"description", run.description},
          {"optimizer", run.optimizer},
          {"global_batch", run.global_batch},
          {"micro_batch", run.micro_batch},
          {"workers", run.workers},
          {"ranks", last.ranks},
          {"backward_passes_per_step", config.backward_passes_per_step},
          {"peak_lr", schedule.peak_lr()},
          {"schedule", schedule.to_json()},
          {"config", train::config_json(config)},
          {"steps_per_epoch", result.steps_per_epoch},
          {"epochs", epochs},
          {"final_test_accuracy", last.test_accuracy},
          {"final_test_loss", last.test_loss},
          {"train_seconds", train_seconds},
          {"wall_seconds", result.seconds},
          {"target_accuracy", target_accuracy},
          {"epochs_to_target", epochs_to_target},
          {"seconds_to_target", seconds_to_target}};
}

void print_converge_table(std::ostream& out, const nlohmann::json& records, double target_accuracy) {
  double baseline = -1;
  for (const auto& r : records) {
    if (r["name"] == "baseline") baseline = r["final_test_accuracy"].get<double>();
  }
  const std::string target = fmt::format("{:.1f}%", 100 * target_accuracy);
  report::ConsoleTable t({{"configuration", "", 14},
                          {"optimizer", "", 9},
                          {"batch", "(global)", 8},
                          {"workers", "", 7},
                          {"peak lr", "", 8},
                          {"test acc", "(%)", 8},
                          {"vs base", "(points)", 8},
                          {"test loss", "", 9},
                          {"time", "(s)", 7},
                          {"epochs to", target, 9},
                          {"time to", target + " (s)", 12}});
  t.print_header(out);
  for (const auto& r : records) {
    const double acc = r["final_test_accuracy"].get<double>();
    const auto& ett = r["epochs_to_target"];
    const auto& stt = r["seconds_to_target"];
    t.print_row(out, {r["name"].get<std::string>(), r["optimizer"].get<std::string>(),
                      std::to_string(r["global_batch"].get<long>()), std::to_string(r["workers"].get<long>()),
                      fmt::format("{:.4g}", r["peak_lr"].get<double>()), report::fixed(100 * acc, 2),
                      baseline < 0 ? "-" : fmt::format("{:+.2f}", 100 * (acc - baseline)),
                      report::fixed(r["final_test_loss"].get<double>(), 4),
                      report::fixed(r["train_seconds"].get<double>(), 1),
                      ett.is_null() ? "never" : std::to_string(ett.get<long>()),
                      stt.is_null() ? "never" : report::fixed(stt.get<double>(), 1)});
  }
  out << "# time: training seconds on this machine, test evaluation excluded; emulated workers run one after\n"
         "# another here, so on `workers` real devices each epoch would take about 1/workers of it.\n";
}

std::vector<std::string> write_converge_charts(const nlohmann::json& records, const std::string& dir) {
  std::filesystem::create_directories(dir);
  std::vector<std::string> svgs;
  for (const char* metric : {"accuracy", "loss"}) {
    for (const char* axis : {"epoch", "time"}) {
      report::Chart c;
      const bool acc = std::string(metric) == "accuracy";
      const bool by_epoch = std::string(axis) == "epoch";
      c.title = fmt::format("test {} against {}", metric, by_epoch ? "epoch" : "training time");
      c.x_label = by_epoch ? "epoch" : "training time on this machine (s, evaluation excluded)";
      c.y_label = acc ? "test accuracy (%)" : "test loss";
      for (const auto& r : records) {
        report::Series s;
        s.label = fmt::format("{} (batch {})", r["name"].get<std::string>(), r["global_batch"].get<long>());
        for (const auto& e : r["epochs"]) {
          const auto& y = e[acc ? "test_accuracy" : "test_loss"];
          if (y.is_null()) continue;
          const double x = by_epoch ? e["epoch"].get<double>() : e["train_seconds"].get<double>();
          s.points.emplace_back(x, acc ? 100 * y.get<double>() : y.get<double>());
        }
        c.series.push_back(std::move(s));
      }
      const auto files = report::write_chart(c, (std::filesystem::path(dir) / fmt::format("converge_{}_{}", metric, axis)).string());
      svgs.push_back(files.svg);
    }
  }
  return svgs;
}

}  // namespace scalelab::cli
