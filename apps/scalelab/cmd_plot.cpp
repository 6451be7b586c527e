// `scalelab plot FILE.json... [--output BASE] [--title T]`: charts from scalelab JSON records, drawn
// with gnuplot by report/chart.h (BASE.svg and BASE.png, with BASE.dat and BASE.gp beside them
// to restyle). All files must hold the same kind of record; the kinds and their charts are in
// plot_records.h.
#include <iostream>
#include <string>
#include <vector>

#include "commands.h"
#include "core/error.h"
#include "core/results.h"
#include "plot_records.h"
#include "report/chart.h"

namespace scalelab::cli {
namespace {

constexpr const char* kUsage =
    "scalelab plot FILE.json... [--output BASE] [--title TEXT]\n\n"
    "Draws a chart from scalelab JSON records of one kind (bench, predict, simulate, scale, converge,\n"
    "calibration or pipeline; docs/user-guide.md says what each draws)\n"
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
  std::vector<PlotInput> inputs;
  for (const auto& path : (*vm)["files"].as<std::vector<std::string>>()) inputs.push_back({path, read_json_file(path)});

  report::Chart chart = chart_of_records(inputs);
  const std::string files_named = input_paths(inputs);
  if (report::drawable_points(chart) == 0) {
    throw_input(files_named + ": no results to plot (the record" + (inputs.size() > 1 ? "s hold" : " holds") +
                " no rows); give records of runs that finished");
  }
  if (chart.series.size() > report::kMaxChartSeries) {
    throw_input(files_named + ": " + std::to_string(chart.series.size()) + " series, more than " +
                std::to_string(report::kMaxChartSeries) + " in one chart; plot fewer records at a time");
  }
  if (!(*vm)["title"].as<std::string>().empty()) chart.title = (*vm)["title"].as<std::string>();
  if ((*vm)["output"].as<std::string>().empty() && !(*vm)["output"].defaulted()) {
    usage_error(args, "--output '': give a path without extension, or leave --output out");
  }
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
