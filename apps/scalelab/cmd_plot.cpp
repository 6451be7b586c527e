// `scalelab plot FILE.json... [--output BASE] [--title T]`: charts from scalelab JSON records, drawn
// with gnuplot by report/chart.h (BASE.svg and BASE.png, with BASE.dat and BASE.gp beside them
// to restyle). All files must hold the same kind of record. Kinds:
//   scalelab.bench   bus bandwidth against message size, one line per run and variant
// To add a kind: write a function turning the documents into a report::Chart and add one line
// to kPlotters below.
#include <functional>
#include <iostream>
#include <string>
#include <vector>

#include "commands.h"
#include "core/error.h"
#include "core/results.h"
#include "report/chart.h"

namespace scalelab::cli {
namespace {

using nlohmann::json;

struct Input {
  std::string path;
  json doc;
};

// Bus bandwidth against size: for every run of every file, one series per variant measured
// (out-of-place, in-place, library) and per type/operator when there are several.
report::Chart bench_chart(const std::vector<Input>& inputs) {
  report::Chart chart;
  chart.x_label = "message size (bytes)";
  chart.y_label = "bus bandwidth (GB/s, GB = 1e9 bytes)";
  chart.log_x = true;
  chart.x_format = "%.0b%BB";
  std::string collective, where;
  for (const auto& in : inputs) {
    if (where.empty() && in.doc.contains("machine")) {
      where = in.doc["machine"].value("hostname", "") + ", " + in.doc["machine"].value("cpu_model", "");
    }
    for (const auto& run : in.doc.at("runs")) {
      const auto& b = run.at("benchmark");
      collective = b.at("collective").get<std::string>();
      const bool several_cases = b.at("datatypes").size() > 1 || b.at("ops").size() > 1;
      const std::string who = b.at("algorithm").get<std::string>() + ", " + std::to_string(b.at("ranks").get<int>()) +
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
  std::function<report::Chart(const std::vector<Input>&)> chart;
};

const Plotter kPlotters[] = {
    {"scalelab.bench", 1, bench_chart},
};

constexpr const char* kUsage =
    "scalelab plot FILE.json... [--output BASE] [--title TEXT]\n\n"
    "Draws a chart from scalelab JSON records (scalelab.bench: bus bandwidth against message size)\n"
    "with gnuplot: BASE.svg and BASE.png, plus BASE.dat (the data) and BASE.gp (the script) to\n"
    "restyle and redraw with `gnuplot BASE.gp`. BASE defaults to the first file without .json.\n\n"
    "example: scalelab plot bench.json --output out/busbw";

}  // namespace

int cmd_plot(const Args& args) {
  po::options_description opts("options");
  opts.add_options()
      ("files", po::value<std::vector<std::string>>()->multitoken(), "JSON record files")
      ("output", po::value<std::string>()->default_value(""), "output path without extension")
      ("title", po::value<std::string>()->default_value(""), "chart title (default: from the records)");
  po::positional_options_description pos;
  pos.add("files", -1);
  const auto vm = parse(args, kUsage, opts, &pos);
  if (!vm) return 0;
  if (!vm->count("files")) usage_error(args, "give at least one JSON file written by a scalelab --json option");
  std::vector<Input> inputs;
  for (const auto& path : (*vm)["files"].as<std::vector<std::string>>()) inputs.push_back({path, read_json_file(path)});

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
      throw_input(in.path + ": schema '" + schema + "' cannot be plotted; give records of kind " + kinds);
    }
    if (in.doc.value("schema_version", 0) > found->max_version) {
      throw_input(in.path + ": " + schema + " schema_version " + std::to_string(in.doc.value("schema_version", 0)) +
                  " is newer than this scalelab reads (" + std::to_string(found->max_version) + "); update scalelab");
    }
    if (plotter != nullptr && plotter != found) throw_usage("scalelab plot: all files must hold the same kind of record");
    plotter = found;
  }

  report::Chart chart;
  try {
    chart = plotter->chart(inputs);
  } catch (const json::exception& e) {
    throw_input("scalelab plot: a record lacks a field the chart needs (" + std::string(e.what()) +
                "); was it written by scalelab --json?");
  }
  if (!(*vm)["title"].as<std::string>().empty()) chart.title = (*vm)["title"].as<std::string>();
  std::string base = (*vm)["output"].as<std::string>();
  if (base.empty()) {
    base = inputs.front().path;
    if (base.size() > 5 && base.ends_with(".json")) base.resize(base.size() - 5);
  }
  const auto files = report::write_chart(chart, base);
  std::cout << "wrote " << files.svg << ", " << files.png << " (data " << files.dat << ", script " << files.gp << ")\n";
  return 0;
}

}  // namespace scalelab::cli
