// The JSON records `scalelab plot` reads back and the chart of each kind. Kinds:
//   scalelab.bench     bus bandwidth against message size, one line per run and variant
//   scalelab.predict   predicted bus bandwidth against message size, one line per file
//   scalelab.simulate  predicted scaling efficiency against GPU count, one line per file
//   scalelab.scale     measured (and predicted) scaling efficiency against rank count
//   scalelab.converge  test accuracy against epoch, one line per configuration
// To add a kind: write a function turning the documents into a report::Chart and add one line to
// kPlotters in plot_records.cpp.
//
//   std::vector<PlotInput> in{{"bench.json", read_json_file("bench.json")}};
//   report::Chart c = chart_of_records(in);  // input error naming the file for a record it cannot draw
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "report/chart.h"

namespace scalelab::cli {

struct PlotInput {
  std::string path;
  nlohmann::json doc;
};

// "a.json, b.json": the inputs as an error names them.
[[nodiscard]] std::string input_paths(const std::vector<PlotInput>& inputs);

// The chart of `inputs`, which must all hold one kind of record that plot knows and a
// schema_version it reads; a record lacking a field the chart needs is an input error.
[[nodiscard]] report::Chart chart_of_records(const std::vector<PlotInput>& inputs);

}  // namespace scalelab::cli
