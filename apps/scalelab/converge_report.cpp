// Records, table and charts of `scalelab converge` (see converge_report.h).
#include "converge_report.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include <fmt/format.h>

#include "core/error.h"
#include "core/results.h"
#include "report/chart.h"
#include "report/table.h"

namespace scalelab::cli {
namespace {

// Checks that `r[key]` exists and has the type the table and charts read; `where` names the entry.
enum class Field { string, integer, number, integer_or_null, number_or_null };

void check_field(const nlohmann::json& r, const char* key, Field f, const std::string& where) {
  const auto it = r.find(key);
  bool ok = it != r.end();
  if (ok) {
    switch (f) {
      case Field::string: ok = it->is_string(); break;
      case Field::integer: ok = it->is_number_integer(); break;
      case Field::number: ok = it->is_number(); break;
      case Field::integer_or_null: ok = it->is_null() || it->is_number_integer(); break;
      case Field::number_or_null: ok = it->is_null() || it->is_number(); break;
    }
  }
  if (!ok) {
    const char* type = f == Field::string ? "a string" : f == Field::integer ? "an integer" : f == Field::number ? "a number"
                       : f == Field::integer_or_null ? "an integer or null" : "a number or null";
    throw_input(where + ": \"" + key + "\" is " + (it == r.end() ? "missing" : "not " + std::string(type)) +
                "; give files written by scalelab converge --json");
  }
}

void check_configuration(const nlohmann::json& r, const std::string& where) {
  if (!r.is_object()) throw_input(where + ": not an object; give files written by scalelab converge --json");
  check_field(r, "name", Field::string, where);
  check_field(r, "optimizer", Field::string, where);
  check_field(r, "global_batch", Field::integer, where);
  check_field(r, "workers", Field::integer, where);
  check_field(r, "peak_lr", Field::number, where);
  check_field(r, "final_test_accuracy", Field::number, where);
  check_field(r, "final_test_loss", Field::number, where);
  check_field(r, "train_seconds", Field::number, where);
  check_field(r, "epochs_to_target", Field::integer_or_null, where);
  check_field(r, "seconds_to_target", Field::number_or_null, where);
  // Counts no run writes: a configuration trains at least one epoch, on at least one worker.
  for (const char* key : {"global_batch", "workers"}) {
    if (r[key].get<long long>() < 1) throw_input(where + ": \"" + key + "\" is " + r[key].dump() + "; a run has at least 1");
  }
  const auto epochs = r.find("epochs");
  if (epochs == r.end() || !epochs->is_array() || epochs->empty()) {
    throw_input(where + ": \"epochs\" is missing, not an array or empty; give files written by scalelab converge --json");
  }
  for (std::size_t i = 0; i < epochs->size(); ++i) {
    const nlohmann::json& e = (*epochs)[i];
    const std::string at = where + ".epochs[" + std::to_string(i) + "]";
    if (!e.is_object()) throw_input(at + ": not an object; give files written by scalelab converge --json");
    check_field(e, "epoch", Field::number, at);
    check_field(e, "train_seconds", Field::number, at);
    check_field(e, "test_accuracy", Field::number_or_null, at);
    check_field(e, "test_loss", Field::number_or_null, at);
  }
}

}  // namespace

nlohmann::json diverged_at_epoch(const nlohmann::json& epochs) {
  nlohmann::json at = nullptr;
  if (!epochs.is_array()) return at;
  for (auto it = epochs.rbegin(); it != epochs.rend(); ++it) {
    if (!it->is_object()) break;
    const auto acc = it->find("test_accuracy");
    const auto epoch = it->find("epoch");
    if (acc == it->end() || epoch == it->end() || !acc->is_number() || acc->get<double>() >= kDivergedAccuracy) break;
    at = *epoch;
  }
  return at;
}

ConvergeRecords read_converge_records(const std::vector<std::string>& files, double target_accuracy) {
  ConvergeRecords out;
  out.target_accuracy = target_accuracy;
  for (const auto& f : files) {
    const nlohmann::json doc = read_json_file(f);
    const auto schema = doc.is_object() ? doc.find("schema") : doc.end();
    const std::string name = schema != doc.end() && schema->is_string() ? schema->get<std::string>() : "";
    if (name != "scalelab.converge") {
      throw_input(f + ": not a scalelab converge record (schema '" + name + "'); write one with --json");
    }
    const auto version = doc.find("schema_version");
    if (version == doc.end() || !version->is_number_integer() || version->get<long long>() < 1 ||
        version->get<long long>() > kConvergeSchemaVersion) {
      throw_input(f + ": schema_version " + (version == doc.end() ? std::string("(none)") : version->dump()) +
                  " is not one this scalelab reads (1 to " + std::to_string(kConvergeSchemaVersion) +
                  "); give a record written by scalelab converge --json");
    }
    if (const auto settings = doc.find("settings"); settings != doc.end()) {
      if (!settings->is_object()) throw_input(f + ": \"settings\" is not an object; give files written by scalelab converge --json");
      if (settings->contains("target_accuracy")) {
        check_field(*settings, "target_accuracy", Field::number, f + ": settings");
        out.target_accuracy = (*settings)["target_accuracy"].get<double>();
      }
    }
    const auto configurations = doc.find("configurations");
    if (configurations == doc.end() || !configurations->is_array()) {
      throw_input(f + ": \"configurations\" is missing or not an array; give files written by scalelab converge --json");
    }
    if (configurations->empty()) {
      throw_input(f + ": holds no configurations (its run stopped before the first one finished); give a record of a "
                      "run that trained at least one");
    }
    if (doc.value("complete", true) == false) {
      std::fprintf(stderr, "warning: %s is from a run that did not finish: %zu configuration%s in it\n", f.c_str(),
                   configurations->size(), configurations->size() == 1 ? "" : "s");
    }
    for (std::size_t i = 0; i < configurations->size(); ++i) {
      check_configuration((*configurations)[i], f + ": configurations[" + std::to_string(i) + "]");
      out.configurations.push_back((*configurations)[i]);
      // Records written before the field existed get it too; it is derived from the epochs.
      out.configurations.back()["diverged_at_epoch"] = diverged_at_epoch((*configurations)[i]["epochs"]);
    }
  }
  return out;
}

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
          {"seconds_to_target", seconds_to_target},
          {"diverged_at_epoch", diverged_at_epoch(epochs)}};
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
  std::string diverged_note;
  for (const auto& r : records) {
    const double acc = r["final_test_accuracy"].get<double>();
    const auto& ett = r["epochs_to_target"];
    const auto& stt = r["seconds_to_target"];
    const nlohmann::json diverged = diverged_at_epoch(r["epochs"]);
    const std::string never = diverged.is_null() ? "never" : "diverged";
    if (!diverged.is_null()) {
      diverged_note += fmt::format("{}{} at lr {:.4g} from epoch {}", diverged_note.empty() ? "" : "; ",
                                   r["name"].get<std::string>(), r["peak_lr"].get<double>(), diverged.dump());
    }
    t.print_row(out, {r["name"].get<std::string>(), r["optimizer"].get<std::string>(),
                      std::to_string(r["global_batch"].get<long>()), std::to_string(r["workers"].get<long>()),
                      fmt::format("{:.4g}", r["peak_lr"].get<double>()), report::fixed(100 * acc, 2),
                      baseline < 0 ? "-" : fmt::format("{:+.2f}", 100 * (acc - baseline)),
                      report::fixed(r["final_test_loss"].get<double>(), 4),
                      report::fixed(r["train_seconds"].get<double>(), 1),
                      ett.is_null() ? never : std::to_string(ett.get<long>()),
                      stt.is_null() ? never : report::fixed(stt.get<double>(), 1)});
  }
  if (!diverged_note.empty()) {
    out << fmt::format("# diverged (test accuracy below {:.0f}% to the last epoch: the weights blew up or the ReLUs died): {}\n",
                       100 * kDivergedAccuracy, diverged_note);
  }
  out << fmt::format("# time: training seconds on this machine, test evaluation excluded; emulated workers run one after\n"
                     "# another here, so on `workers` real devices each epoch would take about 1/workers of it (the time\n"
                     "# charts divide by workers x {:.0f}%, Lab 1's scaling-efficiency bar).\n",
                     100 * kDeviceScalingEfficiency);
}

double device_seconds(const nlohmann::json& record, double train_seconds) {
  const long workers = record["workers"].get<long>();
  return workers <= 1 ? train_seconds : train_seconds / (static_cast<double>(workers) * kDeviceScalingEfficiency);
}

namespace {

// The key figures of a set of records, for the charts' titles: the baseline's final test accuracy
// (or loss) and the best other configuration's; and the configuration that reaches the target
// soonest on its own devices.
std::string final_headline(const nlohmann::json& records, bool accuracy) {
  const char* key = accuracy ? "final_test_accuracy" : "final_test_loss";
  auto value = [&](const nlohmann::json& r) { return r[key].get<double>(); };
  auto shown = [&](const nlohmann::json& r) {
    return accuracy ? fmt::format("{:.2f}%", 100 * value(r)) : fmt::format("{:.4f}", value(r));
  };
  const nlohmann::json* base = nullptr;
  const nlohmann::json* best = nullptr;
  for (const auto& r : records) {
    if (r["name"] == "baseline") {
      base = &r;
    } else if (best == nullptr || (accuracy ? value(r) > value(*best) : value(r) < value(*best))) {
      best = &r;
    }
  }
  std::string out;
  if (base) out = "baseline " + shown(*base);
  if (best) {
    out += fmt::format("{}best large batch {} ({}, batch {})", out.empty() ? "" : ", ", shown(*best),
                       (*best)["name"].get<std::string>(), (*best)["global_batch"].get<long>());
  }
  return out;
}

std::string time_headline(const nlohmann::json& records) {
  const nlohmann::json* fastest = nullptr;
  double fastest_s = 0;
  double target = 0;
  for (const auto& r : records) {
    target = r.value("target_accuracy", target);
    if (r["seconds_to_target"].is_null()) continue;
    const double t = device_seconds(r, r["seconds_to_target"].get<double>());
    if (fastest == nullptr || t < fastest_s) {
      fastest = &r;
      fastest_s = t;
    }
  }
  if (fastest == nullptr) return fmt::format("no configuration reached {:.1f}%", 100 * target);
  return fmt::format("first to {:.1f}%: {}, {} workers, {:.2g} s", 100 * target, (*fastest)["name"].get<std::string>(),
                     (*fastest)["workers"].get<long>(), fastest_s);
}

}  // namespace

std::vector<std::string> write_converge_charts(const nlohmann::json& records, const std::string& dir) {
  std::filesystem::create_directories(dir);
  std::vector<std::string> svgs;
  const std::string time_key = time_headline(records);
  for (const char* metric : {"accuracy", "loss"}) {
    for (const char* axis : {"epoch", "time"}) {
      report::Chart c;
      const bool acc = std::string(metric) == "accuracy";
      const bool by_epoch = std::string(axis) == "epoch";
      // The time axis is each configuration's own devices: emulated workers run one after another
      // here, so this machine's time is divided by the workers at Lab 1's scaling-efficiency bar.
      c.title = by_epoch ? fmt::format("test {} against epoch: {}", metric, final_headline(records, acc))
                         : fmt::format("test {} against time on the configuration's own devices: {}", metric, time_key);
      c.x_label = by_epoch ? "epoch"
                           : fmt::format("training time on `workers` devices, predicted (s, log scale): this machine's time / (workers x {:.0f}%)",
                                         100 * kDeviceScalingEfficiency);
      c.y_label = acc ? "test accuracy (%)" : "test loss";
      for (const auto& r : records) {
        report::Series s;
        s.label = fmt::format("{}, lr {:.3g} (batch {}, {} worker{})", r["name"].get<std::string>(), r["peak_lr"].get<double>(),
                              r["global_batch"].get<long>(), r["workers"].get<long>(), r["workers"].get<long>() == 1 ? "" : "s");
        // A diverged run is drawn up to the epoch it diverged at, and marked there.
        const nlohmann::json diverged = diverged_at_epoch(r["epochs"]);
        for (const auto& e : r["epochs"]) {
          const auto& y = e[acc ? "test_accuracy" : "test_loss"];
          if (y.is_null()) continue;
          const double x = by_epoch ? e["epoch"].get<double>() : device_seconds(r, e["train_seconds"].get<double>());
          s.points.emplace_back(x, acc ? 100 * y.get<double>() : y.get<double>());
          if (by_epoch) c.x_tics.push_back(x);  // tics at whole epochs only, not 1.5, 2.5
          if (!diverged.is_null() && e["epoch"] == diverged) break;
        }
        if (!diverged.is_null()) {
          s.label += ": diverged at epoch " + diverged.dump();
          s.end_label = "diverged";
        }
        c.series.push_back(std::move(s));
      }
      // Time on a log axis: 16 or 32 devices divide it by that much, which a linear axis would
      // crush against zero beside the one-worker baseline.
      if (!by_epoch) {
        c.log_x = true;
        c.log_x_base = 10;
      }
      std::sort(c.x_tics.begin(), c.x_tics.end());
      c.x_tics.erase(std::unique(c.x_tics.begin(), c.x_tics.end()), c.x_tics.end());
      const auto files = report::write_chart(c, (std::filesystem::path(dir) / fmt::format("converge_{}_{}", metric, axis)).string());
      svgs.push_back(files.svg);
    }
  }
  return svgs;
}

}  // namespace scalelab::cli
