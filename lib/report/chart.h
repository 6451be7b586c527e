// Charts drawn by gnuplot, kept restylable: write_chart() writes BASE.dat (the data, one block
// per series), BASE.gp (the gnuplot script, which refers to the .dat by its file name) and runs
// gnuplot in BASE's folder to draw BASE.svg and BASE.png (terminals svg and pngcairo, Debian's
// gnuplot-nox). An instructor edits BASE.gp and runs `gnuplot BASE.gp` there to redraw.
// Used by `scalelab plot` for bus bandwidth against message size, and by other commands for
// scaling and convergence charts.
//
//   Chart c{.title = "allreduce bus bandwidth", .x_label = "message size", .y_label = "GB/s",
//           .log_x = true, .x_format = "%.0b%BB"};
//   c.series.push_back({"ring, 2 ranks", {{1024, 0.5}, {2048, 0.9}}});
//   ChartFiles f = write_chart(c, "out/busbw");   // throws if gnuplot is missing, after .dat/.gp
#pragma once
#include <string>
#include <utility>
#include <vector>

namespace scalelab::report {

struct Series {
  std::string label;
  std::vector<std::pair<double, double>> points;  // (x, y), drawn in this order
};

struct Chart {
  std::string title;
  std::string x_label;
  std::string y_label;
  bool log_x = false;
  int log_x_base = 2;          // base of the x log scale (2 for bytes)
  bool log_y = false;
  std::string x_format;        // gnuplot format for x tics ("%.0b%BB": 1KiB, 1MiB); empty: default
  std::string y_format;
  std::vector<Series> series;
  // When not empty, the only x tics, at these values (labelled by x_format or gnuplot's default),
  // with a margin left and right so points on the first and last tic stay clear of the border:
  // e.g. the rank counts of a scaling chart, which gnuplot's automatic tics would split into
  // 1.2, 1.4 ... between 1 and 2 ranks.
  std::vector<double> x_tics = {};
  // The y axis from 0 (a ratio or a share: starting elsewhere exaggerates differences).
  bool y_from_zero = false;
  // Where the legend goes (gnuplot's `set key`): "top left", "bottom right", ...
  std::string key = "top left";
};

struct ChartFiles {
  std::string dat, gp, svg, png;
};

// Writes BASE.dat and BASE.gp, then draws BASE.svg and BASE.png with gnuplot. Errors (one line):
// a missing gnuplot names the Debian package and says the .dat and .gp were written; a failing
// gnuplot names the script.
ChartFiles write_chart(const Chart& chart, const std::string& base);

// The gnuplot script write_chart writes, for a data file named `dat_name` (no folder) and
// pictures named `stem`.svg / `stem`.png.
[[nodiscard]] std::string gnuplot_script(const Chart& chart, const std::string& dat_name, const std::string& stem);

}  // namespace scalelab::report
