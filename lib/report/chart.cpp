// gnuplot charts: data, script and pictures side by side (chart.h).
#include "report/chart.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <fstream>
#include <sstream>

#include "core/atomic_file.h"
#include "core/error.h"
#include "core/output_path.h"
#include "core/process.h"

namespace scalelab::report {
namespace {

// Whether the file's last bytes, trailing whitespace aside, are `ending`.
bool ends_with_text(const std::string& path, const std::string& ending) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  const std::streamoff tail = std::min<std::streamoff>(size, 64);
  std::string last(static_cast<std::size_t>(tail), '\0');
  in.seekg(size - tail);
  in.read(last.data(), tail);
  while (!last.empty() && (last.back() == '\n' || last.back() == '\r' || last.back() == ' ')) last.pop_back();
  return last.size() >= ending.size() && last.compare(last.size() - ending.size(), ending.size(), ending) == 0;
}

namespace fs = std::filesystem;

// A gnuplot string expression: single quotes, with embedded single quotes doubled; a newline
// (a second line of a title) becomes a double-quoted "\n" joined on by gnuplot's `.` operator.
std::string quoted(const std::string& s) {
  std::string out = "'";
  for (const char c : s) {
    if (c == '\n') {
      out += "'.\"\\n\".'";
      continue;
    }
    out += c;
    if (c == '\'') out += '\'';
  }
  return out + "'";
}

void write_text(const fs::path& path, const std::string& text) {
  write_file_atomically(path.string(), text, "");  // never half a .dat or .gp, no temporary left
}

// Text for a comment of the .dat file: every line of it stays a comment (a title of two lines, or
// a label read from a record, must not add data points), a carriage return becomes a space.
std::string comment_text(std::string text) {
  for (char& c : text) {
    if (c == '\r') c = ' ';
  }
  for (std::size_t at = text.find('\n'); at != std::string::npos; at = text.find('\n', at + 3)) text.replace(at, 1, "\n# ");
  return text;
}

std::string data_text(const Chart& chart) {
  std::ostringstream out;
  out.precision(10);
  out << "# " << comment_text(chart.title) << "\n# columns: x y; one block per series (gnuplot 'index N')\n";
  for (std::size_t i = 0; i < chart.series.size(); ++i) {
    if (i > 0) out << "\n\n";
    out << "# series " << i << ": " << comment_text(chart.series[i].label) << "\n";
    for (const auto& [x, y] : chart.series[i].points) out << x << ' ' << y << '\n';
  }
  return out.str();
}

// Numbers written into the script: enough digits to place a tic or label exactly.
std::string number(double v) {
  std::ostringstream out;
  out.precision(15);
  out << v;
  return out.str();
}

// The smallest and largest positive x of the chart's points (a log axis has no other).
std::pair<double, double> positive_x_range(const Chart& chart) {
  double lo = std::numeric_limits<double>::infinity(), hi = 0;
  for (const auto& s : chart.series) {
    for (const auto& [x, y] : s.points) {
      if (x > 0) lo = std::min(lo, x), hi = std::max(hi, x);
    }
  }
  return {lo, hi};
}

void write_x_tics(std::ostream& gp, const Chart& chart) {
  if (chart.x_bytes) {
    std::vector<double> tics = chart.x_tics;
    if (tics.empty()) {
      const auto [lo, hi] = positive_x_range(chart);
      if (hi > 0) tics = byte_tics(lo, hi);
    }
    if (tics.empty()) return;
    gp << "set xtics (";
    for (std::size_t i = 0; i < tics.size(); ++i) gp << (i ? ", " : "") << quoted(byte_size_label(tics[i])) << " " << number(tics[i]);
    // A margin left and right: gnuplot may drop a tic that falls exactly on the autoscaled border.
    gp << ")\nset offsets graph 0.03, graph 0.03, 0, 0\n";
    return;
  }
  if (chart.x_tics.empty()) return;
  gp << "set xtics (";
  for (std::size_t i = 0; i < chart.x_tics.size(); ++i) gp << (i ? ", " : "") << number(chart.x_tics[i]);
  gp << ")\nset offsets graph 0.05, graph 0.05, 0, 0\n";
}

// A legend below the plot (the default) is laid out in as many columns as the longest label lets
// fit across the 900-pixel picture; {columns, rows}, or {0, 0} for a legend placed elsewhere.
std::pair<std::size_t, std::size_t> key_layout(const Chart& chart) {
  if (chart.key != "below" || chart.series.empty()) return {0, 0};
  std::size_t longest = 1;
  for (const auto& s : chart.series) longest = std::max(longest, s.label.size());
  constexpr std::size_t kCharsAcross = 100;  // characters of 'Sans,11' across the picture, with room to spare
  constexpr std::size_t kSampleChars = 10;   // the line and point drawn beside each label
  const std::size_t columns = std::clamp<std::size_t>(kCharsAcross / (longest + kSampleChars), 1, chart.series.size());
  return {columns, (chart.series.size() + columns - 1) / columns};
}

// The legend, with a bottom margin for its rows when it is below so that it clears the x label.
void write_key(std::ostream& gp, const Chart& chart) {
  const auto [columns, rows] = key_layout(chart);
  if (columns == 0) {
    gp << "set key " << chart.key << "\n";
    return;
  }
  gp << "set key below maxcols " << columns << "\n"
     << "set bmargin " << 4 + rows << "\n";
}

// The pictures' height: 560 pixels, and a line more for each legend row past the second, so that
// a long legend does not squeeze the data.
int picture_height(const Chart& chart) {
  const std::size_t rows = key_layout(chart).second;
  return 560 + 20 * static_cast<int>(rows > 2 ? rows - 2 : 0);
}

}  // namespace

std::string byte_size_label(double bytes) {
  static const char* const kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  std::size_t u = 0;
  double v = bytes;
  while (std::abs(v) >= 1024 && u + 1 < std::size(kUnits)) v /= 1024, ++u;
  char buf[64];
  if (v == std::floor(v)) {
    std::snprintf(buf, sizeof buf, "%.0f %s", v, kUnits[u]);
  } else {
    std::snprintf(buf, sizeof buf, "%.3g %s", v, kUnits[u]);
  }
  return buf;
}

std::vector<double> byte_tics(double lo, double hi, std::size_t max_tics) {
  if (!(lo > 0) || !(hi >= lo) || !std::isfinite(hi)) return {};
  const int e_lo = static_cast<int>(std::ceil(std::log2(lo) - 1e-9));
  const int e_hi = static_cast<int>(std::floor(std::log2(hi) + 1e-9));
  if (e_lo > e_hi) return {lo};
  const auto multiples = [&](int step) {
    std::vector<double> tics;
    for (int e = e_lo; e <= e_hi; ++e) {
      if (e % step == 0) tics.push_back(std::ldexp(1.0, e));
    }
    return tics;
  };
  std::vector<double> tics;
  for (const int step : {1, 2, 5, 10, 20}) {
    tics = multiples(step);
    if (!tics.empty() && tics.size() <= std::max<std::size_t>(max_tics, 1)) return tics;
  }
  return tics.empty() ? std::vector<double>{std::ldexp(1.0, e_lo)} : tics;
}

// An axis whose points all share one value (one epoch, one rank count, one size) gets a range
// around it: gnuplot would otherwise widen it itself and print "Warning: empty x range" on
// stderr, among the command's own output.
void write_single_value_ranges(std::ostream& gp, const Chart& chart) {
  double x_lo = INFINITY, x_hi = -INFINITY, y_lo = INFINITY, y_hi = -INFINITY;
  for (const Series& s : chart.series) {
    for (const auto& [x, y] : s.points) {
      if (!std::isfinite(x) || !std::isfinite(y) || (chart.log_x && x <= 0) || (chart.log_y && y <= 0)) continue;
      x_lo = std::min(x_lo, x), x_hi = std::max(x_hi, x), y_lo = std::min(y_lo, y), y_hi = std::max(y_hi, y);
    }
  }
  const auto around = [](double v, bool log) {
    if (log) return std::pair{v / 2, v * 2};
    const double d = v == 0 ? 1.0 : std::abs(v) * 0.1;
    return std::pair{v - d, v + d};
  };
  if (x_lo == x_hi) {
    const auto [lo, hi] = around(x_lo, chart.log_x);
    gp << "set xrange [" << number(lo) << ":" << number(hi) << "]\n";
  }
  if (y_lo == y_hi) {
    auto [lo, hi] = around(y_lo, chart.log_y);
    if (chart.y_from_zero) lo = 0, hi = std::max(hi, 1e-9);
    gp << "set yrange [" << number(lo) << ":" << number(hi) << "]\n";
  }
}

std::string gnuplot_script(const Chart& chart, const std::string& dat_name, const std::string& stem) {
  std::ostringstream gp;
  gp << "# Drawn by scalelab from " << dat_name << "; edit and run `gnuplot " << stem << ".gp` in this folder.\n"
     << "set title " << quoted(chart.title) << "\n"
     << "set xlabel " << quoted(chart.x_label) << "\n"
     << "set ylabel " << quoted(chart.y_label) << "\n"
     << "set grid\n";
  write_key(gp, chart);
  if (chart.y_from_zero) gp << "set yrange [0:*]\n";
  if (chart.log_x) gp << "set logscale x " << chart.log_x_base << "\n";
  if (chart.log_y) gp << "set logscale y\n";
  if (!chart.x_format.empty()) gp << "set format x " << quoted(chart.x_format) << "\n";
  if (!chart.y_format.empty()) gp << "set format y " << quoted(chart.y_format) << "\n";
  write_x_tics(gp, chart);
  write_single_value_ranges(gp, chart);
  gp << "set style data linespoints\n";
  for (std::size_t i = 0; i < chart.series.size(); ++i) {
    const Series& s = chart.series[i];
    if (s.end_label.empty() || s.points.empty()) continue;
    gp << "set label " << i + 1 << " " << quoted(s.end_label) << " at " << number(s.points.back().first) << ", "
       << number(s.points.back().second) << " offset 1, 0.6 front\n";
  }
  std::ostringstream plot;
  plot << "plot";
  for (std::size_t i = 0; i < chart.series.size(); ++i) {
    const Series& s = chart.series[i];
    const std::string color = s.color.empty() ? kPalette[i % std::size(kPalette)] : s.color;
    plot << (i ? ", \\\n     " : " ") << quoted(dat_name) << " index " << i << " using 1:2 title " << quoted(s.label)
         << " linewidth 2 linecolor rgb " << quoted(color) << " dashtype " << s.dashtype << " pointtype "
         << (s.pointtype > 0 ? s.pointtype : 7 + static_cast<int>(i % 6)) << " pointsize " << number(s.pointsize);
  }
  if (chart.series.empty()) plot << " NaN notitle";
  const int height = picture_height(chart);
  gp << "set terminal svg size 900," << height << " dynamic enhanced font 'Sans,12' background rgb 'white'\n"
     << "set output " << quoted(stem + ".svg") << "\n"
     << plot.str() << "\n"
     << "set terminal pngcairo size 900," << height << " enhanced font 'Sans,11'\n"
     << "set output " << quoted(stem + ".png") << "\n"
     << "replot\n"
     << "unset output\n";
  return gp.str();
}

std::size_t drawable_points(const Chart& chart) {
  std::size_t n = 0;
  for (const Series& s : chart.series) {
    for (const auto& [x, y] : s.points) {
      if (std::isfinite(x) && std::isfinite(y) && (!chart.log_x || x > 0) && (!chart.log_y || y > 0)) ++n;
    }
  }
  return n;
}

void check_chart_output(const std::string& parameter, const std::string& base) {
  if (fs::path(base).filename().empty()) {
    throw_parameter(ErrorKind::usage, parameter, base + ": names a folder; give a file name without extension, e.g. out/busbw");
  }
  // Each of the four can be written (a folder named BASE.svg would otherwise fail inside gnuplot).
  for (const char* ext : {".dat", ".gp", ".svg", ".png"}) check_output_file(parameter, base + ext);
}

ChartFiles write_chart(const Chart& chart, const std::string& base) {
  if (drawable_points(chart) == 0) {
    throw_input("chart " + base + ": nothing to draw (no finite point" + std::string(chart.log_x || chart.log_y ? ", positive on its log axis" : "") +
                "); give records that hold results");
  }
  if (chart.series.size() > kMaxChartSeries) {
    throw_input("chart " + base + ": " + std::to_string(chart.series.size()) + " series, more than " +
                std::to_string(kMaxChartSeries) + " in one chart; draw fewer records at a time");
  }
  const fs::path base_path(base);
  const fs::path dir = base_path.has_parent_path() ? base_path.parent_path() : fs::path(".");
  const std::string stem = base_path.filename().string();
  if (stem.empty()) throw_usage("plot output '" + base + "': give a file name without extension, e.g. out/busbw");
  std::error_code ec;
  fs::create_directories(dir, ec);
  check_chart_output("output", base);
  ChartFiles files{base + ".dat", base + ".gp", base + ".svg", base + ".png"};
  write_text(files.dat, data_text(chart));
  write_text(files.gp, gnuplot_script(chart, stem + ".dat", stem));
  const std::string gnuplot = find_in_path("gnuplot");
  if (gnuplot.empty()) {
    throw_runtime("gnuplot not found: install it (Debian: apt-get install gnuplot-nox); the data and script are in " +
                  files.dat + " and " + files.gp);
  }
  const int rc = run_process({gnuplot, stem + ".gp"}, dir.string());
  if (rc != 0) {
    throw_runtime("gnuplot failed (exit " + std::to_string(rc) + ") on " + files.gp +
                  "; run `gnuplot " + stem + ".gp` in " + dir.string() + " to see why");
  }
  // gnuplot exits 0 when the disk fills under it: a chart counts as written when it is whole (an
  // SVG ends with its closing tag, a PNG with its IEND chunk).
  for (const auto& [file, ending] : {std::pair{&files.svg, std::string("</svg>")}, std::pair{&files.png, std::string("IEND\xae\x42\x60\x82")}}) {
    if (!ends_with_text(*file, ending)) {
      throw_runtime(*file + ": gnuplot left it incomplete (a full disk?); free some space and draw it again (`gnuplot " + stem +
                    ".gp` in " + dir.string() + ")");
    }
  }
  return files;
}

}  // namespace scalelab::report
