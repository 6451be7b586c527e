// Charts drawn by gnuplot, kept restylable: write_chart() writes BASE.dat (the data, one block
// per series), BASE.gp (the gnuplot script, which refers to the .dat by its file name) and runs
// gnuplot in BASE's folder to draw BASE.svg and BASE.png (terminals svg and pngcairo, Debian's
// gnuplot-nox). An instructor edits BASE.gp and runs `gnuplot BASE.gp` there to redraw.
// Used by `scalelab plot` for bus bandwidth against message size, and by other commands for
// scaling and convergence charts.
//
// The project's chart style: legends outside the data (below it), a palette without faint
// colours, integer tics where the quantity is an integer (x_tics), byte sizes labelled "32 B",
// "1 KiB", "1 MiB" (x_bytes), and series that stop early marked where they stop (end_label).
//
//   Chart c{.title = "allreduce bus bandwidth", .x_label = "message size", .y_label = "GB/s",
//           .log_x = true, .x_bytes = true};
//   c.series.push_back({"ring, 2 ranks", {{1024, 0.5}, {2048, 0.9}}});
//   c.series.push_back({.label = "ring, P2P off", .points = {{1024, 0.4}}, .dashtype = 2, .pointtype = 6});
//   ChartFiles f = write_chart(c, "out/busbw");   // throws if gnuplot is missing, after .dat/.gp
#pragma once
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace scalelab::report {

struct Series {
  std::string label;
  std::vector<std::pair<double, double>> points;  // (x, y), drawn in this order
  // Style. By default each series takes the next colour of the palette (kPalette) and the next
  // point type; two series that may coincide need another dash type and point type to stay visible.
  std::string color = "";  // "#rrggbb"; empty: the palette's colour for the series' index
  int dashtype = 1;        // gnuplot dash type: 1 solid, 2 dashed, 3 dotted, 4 dash-dot
  int pointtype = 0;       // gnuplot point type (4 open square, 6 open circle, 7 filled circle); 0: by index
  double pointsize = 1;
  // Written beside the last point, e.g. "diverged" for a run drawn only up to where it diverged.
  std::string end_label = "";
};

// The series colours, in order: distinct on white and in grey scale, no pale yellow.
inline constexpr const char* kPalette[] = {"#0072b2", "#d55e00", "#009e73", "#cc79a7", "#000000",
                                           "#e69f00", "#56b4e9", "#8c564b", "#332288", "#999933"};

struct Chart {
  std::string title;
  std::string x_label;
  std::string y_label;
  bool log_x = false;
  int log_x_base = 2;          // base of the x log scale (2 for bytes)
  bool log_y = false;
  std::string x_format;        // gnuplot format for x tics; empty: default
  // x is a size in bytes: tics at powers of two labelled by byte_size_label ("32 B", "1 KiB"),
  // chosen by byte_tics over the data's range (or at x_tics when given).
  bool x_bytes = false;
  std::string y_format;
  std::vector<Series> series;
  // When not empty, the only x tics, at these values (labelled by x_format or gnuplot's default),
  // with a margin left and right so points on the first and last tic stay clear of the border:
  // e.g. the rank counts of a scaling chart, which gnuplot's automatic tics would split into
  // 1.2, 1.4 ... between 1 and 2 ranks.
  std::vector<double> x_tics = {};
  // The y axis from 0 (a ratio or a share: starting elsewhere exaggerates differences).
  bool y_from_zero = false;
  // Where the legend goes (gnuplot's `set key`): below the plot by default, never over the data.
  std::string key = "below";
};

struct ChartFiles {
  std::string dat, gp, svg, png;
};

// A byte count as a tic label: "32 B", "1 KiB", "64 MiB", "1.5 GiB" (binary units, one space).
[[nodiscard]] std::string byte_size_label(double bytes);

// Tics for a log2 byte axis from `lo` to `hi`: the powers of two in the range, every 1st, 2nd,
// 5th, 10th or 20th exponent (multiples of it, so 1 KiB and 1 MiB come first), at most `max_tics`.
// A range holding no power of two gives {lo}.
[[nodiscard]] std::vector<double> byte_tics(double lo, double hi, std::size_t max_tics = 9);

// The most series one chart draws (its legend and palette are for a handful; gnuplot's cairo
// terminal fails on thousands).
inline constexpr std::size_t kMaxChartSeries = 64;

// The points gnuplot can draw: finite, and positive on a log axis.
[[nodiscard]] std::size_t drawable_points(const Chart& chart);

// Checks, before any work, that the chart files BASE.dat/.gp/.svg/.png can be written: BASE names
// a file (not a folder: "out/" has no file name), and each of the four is writable (core/
// output_path.h; BASE's folder must exist). Usage errors about `parameter` ("chart", "output").
void check_chart_output(const std::string& parameter, const std::string& base);

// Writes BASE.dat and BASE.gp, then draws BASE.svg and BASE.png with gnuplot. Errors (one line):
// nothing to draw, or more than kMaxChartSeries series (input errors, before any file is
// written); a missing gnuplot names the Debian package and says the .dat and .gp were written; a
// failing gnuplot names the script.
ChartFiles write_chart(const Chart& chart, const std::string& base);

// The gnuplot script write_chart writes, for a data file named `dat_name` (no folder) and
// pictures named `stem`.svg / `stem`.png.
[[nodiscard]] std::string gnuplot_script(const Chart& chart, const std::string& dat_name, const std::string& stem);

}  // namespace scalelab::report
