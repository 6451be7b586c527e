// Chart::x_tics: a scaling chart of 1 and 2 ranks must label its x axis 1 and 2, not gnuplot's
// automatic 1, 1.2, 1.4 ... 2. Checks the script write_chart writes and the x tic labels of the
// SVG that gnuplot draws from it (the numeric labels centred under the axis).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "report/chart.h"

namespace scalelab::report {
namespace {

namespace fs = std::filesystem;

Chart scaling_chart(const std::vector<double>& ranks) {
  Chart c;
  c.title = "Scaling: images/sec against ranks";
  c.x_label = "ranks";
  c.y_label = "images/sec";
  Series measured{"measured", {}};
  for (const double r : ranks) measured.points.emplace_back(r, 1000.0 * r * 0.9);
  c.series.push_back(measured);
  return c;
}

// The x tic labels of a gnuplot SVG: numeric texts anchored in the middle (y labels are anchored
// at the end, and the title and axis labels are not numbers).
std::vector<std::string> x_tic_labels(const fs::path& svg) {
  std::ifstream in(svg);
  std::stringstream s;
  s << in.rdbuf();
  const std::string text = s.str();
  static const std::regex label(R"(text-anchor="middle">\s*<text><tspan[^>]*>\s*([-+0-9.e]+)</tspan>)");
  std::vector<std::string> out;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), label); it != std::sregex_iterator(); ++it) {
    out.push_back((*it)[1].str());
  }
  return out;
}

std::vector<std::string> drawn_x_labels(const Chart& chart, const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("scalelab_tics_" + name + "_" + std::to_string(getpid()));
  fs::remove_all(dir);
  const ChartFiles f = write_chart(chart, (dir / "scaling").string());
  auto labels = x_tic_labels(f.svg);
  fs::remove_all(dir);
  return labels;
}

TEST(ChartTics, ScriptPutsTheOnlyXTicsAtTheGivenValues) {
  Chart c = scaling_chart({1, 2, 4});
  EXPECT_EQ(gnuplot_script(c, "s.dat", "s").find("set xtics"), std::string::npos) << "no tics asked, none set";
  c.x_tics = {1, 2, 4};
  const std::string gp = gnuplot_script(c, "s.dat", "s");
  EXPECT_NE(gp.find("set xtics (1, 2, 4)\n"), std::string::npos) << gp;
  EXPECT_NE(gp.find("set offsets graph 0.05, graph 0.05, 0, 0\n"), std::string::npos) << gp;
  EXPECT_LT(gp.find("set xtics"), gp.find("\nplot ")) << "tics must be set before plotting";
}

TEST(ChartTics, OneAndTwoRanksAreLabelledOneAndTwoOnly) {
  Chart c = scaling_chart({1, 2});
  // gnuplot's own tics for x in [1, 2]: the fractional ranks this option exists to avoid.
  const auto automatic = drawn_x_labels(c, "auto");
  EXPECT_NE(std::find(automatic.begin(), automatic.end(), "1.2"), automatic.end())
      << "gnuplot no longer draws fractional tics here; the check below may be vacuous";
  c.x_tics = {1, 2};
  EXPECT_EQ(drawn_x_labels(c, "ranks"), (std::vector<std::string>{"1", "2"}));
}

TEST(ChartTics, PowersOfTwoRanksAreLabelledAtEachCountMeasured) {
  Chart c = scaling_chart({1, 2, 4, 8});
  c.x_tics = {1, 2, 4, 8};
  EXPECT_EQ(drawn_x_labels(c, "pow2"), (std::vector<std::string>{"1", "2", "4", "8"}));
}

}  // namespace
}  // namespace scalelab::report
