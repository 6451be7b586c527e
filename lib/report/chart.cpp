// gnuplot charts: data, script and pictures side by side (chart.h).
#include "report/chart.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/atomic_file.h"
#include "core/error.h"
#include "core/process.h"

namespace scalelab::report {
namespace {

namespace fs = std::filesystem;

// A gnuplot string literal: single quotes, with embedded single quotes doubled.
std::string quoted(const std::string& s) {
  std::string out = "'";
  for (const char c : s) {
    out += c;
    if (c == '\'') out += '\'';
  }
  return out + "'";
}

void write_text(const fs::path& path, const std::string& text) {
  write_file_atomically(path.string(), text, "");  // never half a .dat or .gp, no temporary left
}

std::string data_text(const Chart& chart) {
  std::ostringstream out;
  out.precision(10);
  out << "# " << chart.title << "\n# columns: x y; one block per series (gnuplot 'index N')\n";
  for (std::size_t i = 0; i < chart.series.size(); ++i) {
    if (i > 0) out << "\n\n";
    out << "# series " << i << ": " << chart.series[i].label << "\n";
    for (const auto& [x, y] : chart.series[i].points) out << x << ' ' << y << '\n';
  }
  return out.str();
}

}  // namespace

std::string gnuplot_script(const Chart& chart, const std::string& dat_name, const std::string& stem) {
  std::ostringstream gp;
  gp << "# Drawn by scalelab from " << dat_name << "; edit and run `gnuplot " << stem << ".gp` in this folder.\n"
     << "set title " << quoted(chart.title) << "\n"
     << "set xlabel " << quoted(chart.x_label) << "\n"
     << "set ylabel " << quoted(chart.y_label) << "\n"
     << "set grid\nset key " << chart.key << "\n";
  if (chart.y_from_zero) gp << "set yrange [0:*]\n";
  if (chart.log_x) gp << "set logscale x " << chart.log_x_base << "\n";
  if (chart.log_y) gp << "set logscale y\n";
  if (!chart.x_format.empty()) gp << "set format x " << quoted(chart.x_format) << "\n";
  if (!chart.y_format.empty()) gp << "set format y " << quoted(chart.y_format) << "\n";
  if (!chart.x_tics.empty()) {
    std::ostringstream tics;
    tics.precision(15);
    for (std::size_t i = 0; i < chart.x_tics.size(); ++i) tics << (i ? ", " : "") << chart.x_tics[i];
    gp << "set xtics (" << tics.str() << ")\n"
       << "set offsets graph 0.05, graph 0.05, 0, 0\n";
  }
  gp << "set style data linespoints\n";
  std::ostringstream plot;
  plot << "plot";
  for (std::size_t i = 0; i < chart.series.size(); ++i) {
    plot << (i ? ", \\\n     " : " ") << quoted(dat_name) << " index " << i << " using 1:2 title "
         << quoted(chart.series[i].label) << " linewidth 2 pointtype " << (7 + static_cast<int>(i % 6));
  }
  if (chart.series.empty()) plot << " NaN notitle";
  gp << "set terminal svg size 900,560 dynamic enhanced font 'Sans,12' background rgb 'white'\n"
     << "set output " << quoted(stem + ".svg") << "\n"
     << plot.str() << "\n"
     << "set terminal pngcairo size 900,560 enhanced font 'Sans,11'\n"
     << "set output " << quoted(stem + ".png") << "\n"
     << "replot\n"
     << "unset output\n";
  return gp.str();
}

ChartFiles write_chart(const Chart& chart, const std::string& base) {
  const fs::path base_path(base);
  const fs::path dir = base_path.has_parent_path() ? base_path.parent_path() : fs::path(".");
  const std::string stem = base_path.filename().string();
  if (stem.empty()) throw_usage("plot output '" + base + "': give a file name without extension, e.g. out/busbw");
  std::error_code ec;
  fs::create_directories(dir, ec);
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
  return files;
}

}  // namespace scalelab::report
