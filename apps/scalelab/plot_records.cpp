// The records `scalelab plot` draws, and their charts (see plot_records.h).
#include "plot_records.h"

#include <algorithm>
#include <functional>

#include "core/error.h"
#include "core/json_text.h"

namespace scalelab::cli {
namespace {

using nlohmann::json;

// Bus bandwidth against size: for every run of every file, one series per variant measured
// (out-of-place, in-place, library) and per type/operator when there are several.
report::Chart bench_chart(const std::vector<PlotInput>& inputs) {
  report::Chart chart;
  chart.x_label = "message size (bytes)";
  chart.y_label = "bus bandwidth (GB/s, GB = 1e9 bytes)";
  chart.log_x = true;
  chart.x_bytes = true;
  std::string collective, where;
  for (const auto& in : inputs) {
    if (where.empty() && in.doc.contains("machine")) {
      where = in.doc["machine"].value("hostname", "") + ", " + in.doc["machine"].value("cpu_model", "");
    }
    for (const auto& run : in.doc.at("runs")) {
      const auto& b = run.at("benchmark");
      collective = b.at("collective").get<std::string>();
      const bool several_cases = b.at("datatypes").size() > 1 || b.at("ops").size() > 1;
      const std::string who = b.at("algorithm").get<std::string>() + ", " + b.at("ranks").dump() +
                              " ranks, " + b.at("backend").get<std::string>() + (inputs.size() > 1 ? " (" + in.path + ")" : "");
      std::vector<report::Series> series;
      const auto add = [&](const std::string& label, const json& row, const char* key) {
        if (row.at(key).is_null()) return;
        const double x = row.at("size_bytes").get<double>();
        if (x <= 0) return;  // log axis
        for (auto& s : series) {
          if (s.label == label) {
            s.points.emplace_back(x, row.at(key).at("busbw_GBps").get<double>());
            return;
          }
        }
        series.push_back({label, {{x, row.at(key).at("busbw_GBps").get<double>()}}});
      };
      for (const auto& row : run.at("results")) {
        const std::string suffix = several_cases ? ", " + row.at("type").get<std::string>() + " " + row.at("redop").get<std::string>() : "";
        const bool compare = !row.at("library").is_null();
        add(who + (compare ? "" : ", out-of-place") + suffix, row, "out_of_place");
        add(who + ", in-place" + suffix, row, "in_place");
        add("library (" + b.at("backend").get<std::string>() + ")" + suffix, row, "library");
      }
      for (auto& s : series) chart.series.push_back(std::move(s));
    }
  }
  chart.title = collective + " bus bandwidth against message size (measured on " + where + ")";
  return chart;
}

struct Plotter {
  const char* schema;
  int max_version;
  std::function<report::Chart(const std::vector<PlotInput>&)> chart;
};

// Predicted bus bandwidth against size, one line per file (scalelab predict --json).
report::Chart predict_chart(const std::vector<PlotInput>& inputs) {
  report::Chart chart;
  chart.x_label = "message size (bytes)";
  chart.y_label = "bus bandwidth (GB/s, GB = 1e9 bytes)";
  chart.log_x = true;
  chart.x_bytes = true;
  chart.y_from_zero = true;
  std::string collective;
  for (const auto& in : inputs) {
    collective = in.doc.at("collective").get<std::string>();
    report::Series s{in.doc.at("where").get<std::string>() + ", " + in.doc.at("algorithm").get<std::string>(), {}};
    for (const auto& row : in.doc.at("rows")) {
      const double x = row.at("size_bytes").get<double>();
      if (x > 0) s.points.emplace_back(x, row.at("busbw_GBps").get<double>());
    }
    chart.series.push_back(std::move(s));
  }
  chart.title = collective + " bus bandwidth against message size (predicted by the cost model)";
  return chart;
}

// The x tics of a count axis: the counts themselves, deduplicated and sorted.
std::vector<double> count_tics(const report::Chart& chart) {
  std::vector<double> tics;
  for (const auto& s : chart.series) {
    for (const auto& [x, y] : s.points) tics.push_back(x);
  }
  std::sort(tics.begin(), tics.end());
  tics.erase(std::unique(tics.begin(), tics.end()), tics.end());
  return tics;
}

// Scaling efficiency against GPU count, one line per file (scalelab simulate --json).
report::Chart simulate_chart(const std::vector<PlotInput>& inputs) {
  report::Chart chart;
  chart.x_label = "GPUs";
  chart.y_label = "scaling efficiency (%)";
  chart.y_from_zero = true;
  for (const auto& in : inputs) {
    // Version 1 records named the simulated machine `machine`, where the envelope's object is now.
    const json& simulated = in.doc.contains("simulated_machine") ? in.doc.at("simulated_machine") : in.doc.at("machine");
    report::Series s{in.doc.at("workload").at("name").get<std::string>() + " on " + simulated.get<std::string>() +
                         ", batch " + in.doc.at("batch_per_device").dump() + ", " + in.doc.at("precision").get<std::string>(),
                     {}};
    for (const auto& row : in.doc.at("rows")) {
      s.points.emplace_back(row.at("gpus").get<double>(), 100 * row.at("scaling_efficiency").get<double>());
    }
    chart.series.push_back(std::move(s));
  }
  chart.log_x = true;
  chart.x_tics = count_tics(chart);
  chart.title = "scaling efficiency against GPU count (predicted by the step simulator)";
  return chart;
}

// Measured scaling efficiency against rank count, and the prediction where the record has one
// (scalelab scale --json).
report::Chart scale_chart(const std::vector<PlotInput>& inputs) {
  report::Chart chart;
  chart.x_label = "ranks";
  chart.y_label = "scaling efficiency (%)";
  chart.y_from_zero = true;
  std::string where;
  bool with_prediction = false;
  for (const auto& in : inputs) {
    if (where.empty() && in.doc.contains("machine") && in.doc["machine"].is_object()) {
      where = in.doc["machine"].value("cpu_model", std::string()) + ", " + in.doc["machine"].value("hostname", std::string());
    }
    const std::string tag = inputs.size() > 1 ? " (" + in.path + ")" : "";
    report::Series measured{"measured" + tag, {}}, predicted{"predicted" + tag, {}};
    for (const auto& row : in.doc.at("rows")) {
      const double ranks = row.at("ranks").get<double>();
      measured.points.emplace_back(ranks, 100 * row.at("efficiency").get<double>());
      if (row.contains("predicted") && row["predicted"].is_object() && row["predicted"].contains("efficiency") &&
          row["predicted"]["efficiency"].is_number()) {
        predicted.points.emplace_back(ranks, 100 * row["predicted"]["efficiency"].get<double>());
      }
    }
    chart.series.push_back(std::move(measured));
    if (!predicted.points.empty()) {
      with_prediction = true;
      predicted.dashtype = 2;  // dashed: where it meets the measured line, both stay visible
      chart.series.push_back(std::move(predicted));
    }
  }
  chart.x_tics = count_tics(chart);
  // A record with a prediction draws it too: the title names both.
  chart.title = std::string("scaling efficiency against rank count (") + (with_prediction ? "measured and predicted" : "measured") +
                (where.empty() ? std::string() : " on " + where) + ")";
  return chart;
}

// Test accuracy against epoch, one line per configuration (scalelab converge --json).
report::Chart converge_chart(const std::vector<PlotInput>& inputs) {
  report::Chart chart;
  chart.x_label = "epoch";
  chart.y_label = "test accuracy (%)";
  for (const auto& in : inputs) {
    const std::string tag = inputs.size() > 1 ? " (" + in.path + ")" : "";
    for (const auto& c : in.doc.at("configurations")) {
      report::Series s{c.at("name").get<std::string>() + ", batch " + c.at("global_batch").dump() + tag, {}};
      for (const auto& e : c.at("epochs")) {
        if (e.contains("test_accuracy") && e["test_accuracy"].is_number()) {
          s.points.emplace_back(e.at("epoch").get<double>(), 100 * e["test_accuracy"].get<double>());
        }
      }
      if (!s.points.empty()) chart.series.push_back(std::move(s));
    }
  }
  chart.x_tics = count_tics(chart);
  chart.title = "test accuracy against epoch, per configuration (large-batch convergence)";
  return chart;
}

// What calibrate measured: time per call against size for the exchange between the two ranks,
// the reduce-scatter step, the reduction and the copy, with buffers reused (solid) and walking
// through memory (dashed)
// (scalelab calibrate --json).
report::Chart calibration_chart(const std::vector<PlotInput>& inputs) {
  report::Chart chart;
  chart.x_label = "bytes per call";
  chart.y_label = "time per call (us)";
  chart.log_x = true;
  chart.log_y = true;
  chart.x_bytes = true;
  std::string where;
  for (const auto& in : inputs) {
    const json& p = in.doc.at("profile");
    if (where.empty() && in.doc.contains("machine") && in.doc["machine"].is_object()) {
      where = in.doc["machine"].value("cpu_model", std::string()) + ", " + in.doc["machine"].value("hostname", std::string());
    }
    const std::string tag = inputs.size() > 1 ? " (" + in.path + ")" : "";
    for (const auto& [key, what] : {std::pair{"message", "exchange"}, {"exchange_reduce", "exchange + reduce"},
                                    {"reduce", "reduce"}, {"copy", "copy"}}) {
      for (const bool cold : {false, true}) {
        const std::string table = std::string(key) + (cold ? "_cold" : "_hot");
        if (std::string(key) == "exchange_reduce" && !p.contains(table)) continue;  // profiles made before it was measured
        report::Series s{std::string(what) + (cold ? ", through memory" : ", buffers reused") + tag, {}};
        for (const auto& row : p.at(table)) {
          const double bytes = row.at("bytes").get<double>(), us = row.at("us").get<double>();
          if (bytes > 0 && us > 0) s.points.emplace_back(bytes, us);  // log axes
        }
        if (cold) s.dashtype = 2;
        if (!s.points.empty()) chart.series.push_back(std::move(s));
      }
    }
  }
  chart.title = "calibration: time per call against size (measured" + (where.empty() ? std::string() : " on " + where) + ")";
  return chart;
}

// The input pipeline alone: images/s against worker threads, one line per augmentation and IDCT
// (scalelab pipeline --json).
report::Chart pipeline_chart(const std::vector<PlotInput>& inputs) {
  report::Chart chart;
  chart.x_label = "worker threads";
  chart.y_label = "images/s (pipeline alone)";
  chart.y_from_zero = true;
  std::string where;
  for (const auto& in : inputs) {
    if (where.empty() && in.doc.contains("machine") && in.doc["machine"].is_object()) {
      where = in.doc["machine"].value("cpu_model", std::string()) + ", " + in.doc["machine"].value("hostname", std::string());
    }
    const std::string tag = inputs.size() > 1 ? " (" + in.path + ")" : "";
    std::vector<report::Series> series;
    for (const auto& row : in.doc.at("rows")) {
      const std::string label = row.at("augment").get<std::string>() + " augmentation, " +
                                row.at("decode").get<std::string>() + " IDCT" + tag;
      auto it = std::find_if(series.begin(), series.end(), [&](const report::Series& s) { return s.label == label; });
      if (it == series.end()) it = series.insert(series.end(), report::Series{label, {}});
      it->points.emplace_back(row.at("workers").get<double>(), row.at("images_per_s").get<double>());
    }
    for (auto& s : series) chart.series.push_back(std::move(s));
  }
  chart.x_tics = count_tics(chart);
  chart.title = "input pipeline: images/s against workers (measured" + (where.empty() ? std::string() : " on " + where) + ")";
  return chart;
}

const Plotter kPlotters[] = {
    {"scalelab.bench", 1, bench_chart},       {"scalelab.predict", 1, predict_chart}, {"scalelab.simulate", 2, simulate_chart},
    {"scalelab.scale", 1, scale_chart},       {"scalelab.converge", 1, converge_chart},
    {"scalelab.calibration", 4, calibration_chart}, {"scalelab.pipeline", 1, pipeline_chart},
};

}  // namespace

report::Chart chart_of_records(const std::vector<PlotInput>& inputs) {
  const Plotter* plotter = nullptr;
  for (const auto& in : inputs) {
    const std::string schema = in.doc.is_object() && in.doc.contains("schema") && in.doc["schema"].is_string()
                                   ? in.doc["schema"].get<std::string>()
                                   : "";
    const Plotter* found = nullptr;
    for (const auto& p : kPlotters) {
      if (schema == p.schema) found = &p;
    }
    if (found == nullptr) {
      std::string kinds;
      for (const auto& p : kPlotters) kinds += (kinds.empty() ? "" : ", ") + std::string(p.schema);
      if (schema.empty()) {
        throw_input(in.path + ": not a scalelab record (no \"schema\" field); give records written by --json, of kind " + kinds);
      }
      throw_input(in.path + ": schema '" + schema + "' cannot be plotted; give records of kind " + kinds);
    }
    const json version = in.doc.value("schema_version", json(0));
    if (!version.is_number_integer() || version.get<long long>() < 0) {
      throw_input(in.path + ": schema_version " + version.dump() + " is not a version number (0 or more); was it written by scalelab --json?");
    }
    if (version > found->max_version) {
      throw_input(in.path + ": " + schema + " schema_version " + version.dump() + " is newer than this scalelab reads (" +
                  std::to_string(found->max_version) + "); update scalelab");
    }
    if (plotter != nullptr && plotter != found) throw_usage("scalelab plot: all files must hold the same kind of record");
    plotter = found;
  }

  try {
    return plotter->chart(inputs);
  } catch (const json::exception& e) {
    const std::string files = input_paths(inputs);
    throw_input((inputs.size() == 1 ? files : "one of " + files) + ": a record lacks a field the chart needs (" +
                plain_json_error(e) + "); was it written by scalelab --json?");
  }
}

std::string input_paths(const std::vector<PlotInput>& inputs) {
  std::string files;
  for (const auto& in : inputs) files += (files.empty() ? "" : ", ") + in.path;
  return files;
}

}  // namespace scalelab::cli
