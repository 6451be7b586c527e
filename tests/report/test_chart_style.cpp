// The project's chart style, as write_chart's script carries it: byte sizes labelled "32 B" and
// "1 KiB" (one space, binary units) at powers of two, the legend below the data, a palette
// without pale yellow, per-series dash and point types (two series that coincide stay visible),
// a label at the last point of a series that stops early, and a two-line title.
// The legend's layout is checked in the script; gnuplot's own placement was looked at by eye.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "core/error.h"
#include "report/chart.h"

namespace scalelab::report {
namespace {

namespace fs = std::filesystem;

TEST(ByteSizeLabel, OneSpaceBetweenTheNumberAndABinaryUnit) {
  EXPECT_EQ(byte_size_label(8), "8 B");
  EXPECT_EQ(byte_size_label(32), "32 B");
  EXPECT_EQ(byte_size_label(1023), "1023 B");
  EXPECT_EQ(byte_size_label(1024), "1 KiB");
  EXPECT_EQ(byte_size_label(32768), "32 KiB");
  EXPECT_EQ(byte_size_label(1 << 20), "1 MiB");
  EXPECT_EQ(byte_size_label(64.0 * (1 << 20)), "64 MiB");
  EXPECT_EQ(byte_size_label(1.5 * (1 << 30)), "1.5 GiB");
  EXPECT_EQ(byte_size_label(0), "0 B");
}

TEST(ByteTics, PowersOfTwoAtMultiplesOfAStepThatKeepsThemFew) {
  // 8 B .. 256 MiB: exponents 3..28, every 5th: what gnuplot chose, now labelled by us.
  EXPECT_EQ(byte_tics(8, 256.0 * (1 << 20)), (std::vector<double>{32, 1024, 32768, 1 << 20, 32 << 20}));
  // 64 KiB .. 16 MiB: 9 powers of two, all of them.
  EXPECT_EQ(byte_tics(65536, 16 << 20).size(), 9u);
  // 64 KiB .. 64 MiB: 11 powers, too many; every 2nd exponent.
  EXPECT_EQ(byte_tics(65536, 64 << 20), (std::vector<double>{65536, 262144, 1 << 20, 4 << 20, 16 << 20, 64 << 20}));
  // A range holding no power of two, one size, and nonsense.
  EXPECT_EQ(byte_tics(100, 120), (std::vector<double>{100}));
  EXPECT_EQ(byte_tics(1024, 1024), (std::vector<double>{1024}));
  EXPECT_TRUE(byte_tics(0, 1024).empty());
  EXPECT_TRUE(byte_tics(2048, 1024).empty());
}

Chart byte_chart() {
  Chart c;
  c.title = "busbw";
  c.log_x = true;
  c.x_bytes = true;
  c.series.push_back({"on", {{8, 0.1}, {32, 0.5}, {1024, 2}, {32768, 4}}});
  c.series.push_back({.label = "off", .points = {{8, 0.1}, {32, 0.5}, {1024, 2}, {32768, 4}}, .dashtype = 2, .pointtype = 4});
  return c;
}

TEST(ChartStyle, ByteAxisTicsAreLabelledBySize) {
  const std::string gp = gnuplot_script(byte_chart(), "b.dat", "b");
  EXPECT_NE(gp.find("set xtics ('16 B' 16, '64 B' 64, '256 B' 256, '1 KiB' 1024, '4 KiB' 4096, '16 KiB' 16384)\n"),
            std::string::npos)
      << gp;
  EXPECT_NE(gp.find("set offsets graph 0.03, graph 0.03, 0, 0\n"), std::string::npos) << "tics on the last point need a margin";
  EXPECT_EQ(gp.find("set format x"), std::string::npos) << "gnuplot's %b%B writes '32  B' and 'kiB'";
}

TEST(ChartStyle, LegendBelowTheDataWithRoomForItsRows) {
  Chart c = byte_chart();
  std::string gp = gnuplot_script(c, "b.dat", "b");
  EXPECT_NE(gp.find("set key below maxcols 2\nset bmargin 5\n"), std::string::npos) << gp;
  EXPECT_NE(gp.find("set terminal pngcairo size 900,560 "), std::string::npos) << gp;
  c.series.push_back({std::string(80, 'x'), {{8, 1}}});  // a long label: one column, a row each
  gp = gnuplot_script(c, "b.dat", "b");
  EXPECT_NE(gp.find("set key below maxcols 1\nset bmargin 7\n"), std::string::npos) << gp;
  EXPECT_NE(gp.find("set terminal pngcairo size 900,580 "), std::string::npos) << "a third row makes the picture taller";
  c.key = "top left";
  EXPECT_NE(gnuplot_script(c, "b.dat", "b").find("set key top left\n"), std::string::npos);
}

TEST(ChartStyle, EachSeriesHasItsColourDashAndPoint) {
  Chart c = byte_chart();
  c.series[0].color = "#123456";
  const std::string gp = gnuplot_script(c, "b.dat", "b");
  EXPECT_NE(gp.find("title 'on' linewidth 2 linecolor rgb '#123456' dashtype 1 pointtype 7 pointsize 1"), std::string::npos) << gp;
  EXPECT_NE(gp.find("title 'off' linewidth 2 linecolor rgb '" + std::string(kPalette[1]) + "' dashtype 2 pointtype 4"),
            std::string::npos)
      << gp;
}

TEST(ChartStyle, PaletteHasNoPaleYellowAndNoRepeats) {
  for (std::size_t i = 0; i < std::size(kPalette); ++i) {
    EXPECT_STRNE(kPalette[i], "#f0e442") << "gnuplot's default yellow is unreadable on white";
    for (std::size_t j = 0; j < i; ++j) EXPECT_STRNE(kPalette[i], kPalette[j]);
  }
}

TEST(ChartStyle, EndLabelMarksTheLastPointOfASeries) {
  Chart c = byte_chart();
  c.series[1].end_label = "diverged";
  const std::string gp = gnuplot_script(c, "b.dat", "b");
  EXPECT_NE(gp.find("set label 2 'diverged' at 32768, 4 offset 1, 0.6 front\n"), std::string::npos) << gp;
  EXPECT_LT(gp.find("set label 2"), gp.find("\nplot ")) << "labels must be set before plotting";
}

TEST(ChartStyle, TwoLineTitleDrawsWithGnuplot) {
  Chart c = byte_chart();
  c.title = "it's line one\nline two";
  const std::string gp = gnuplot_script(c, "b.dat", "b");
  EXPECT_NE(gp.find("set title 'it''s line one'.\"\\n\".'line two'\n"), std::string::npos) << gp;
  const fs::path dir = fs::temp_directory_path() / ("scalelab_style_" + std::to_string(getpid()));
  fs::remove_all(dir);
  const ChartFiles f = write_chart(c, (dir / "two").string());  // throws if gnuplot rejects the script
  std::ifstream in(f.svg);
  std::stringstream svg;
  svg << in.rdbuf();
  EXPECT_NE(svg.str().find("line two"), std::string::npos);
  EXPECT_NE(svg.str().find("16 B"), std::string::npos);
  std::ifstream dat_in(f.dat);
  std::stringstream dat;
  dat << dat_in.rdbuf();
  EXPECT_NE(dat.str().find("# it's line one\n# line two\n"), std::string::npos) << "both title lines stay comments: " << dat.str();
  fs::remove_all(dir);
}

// A series label with a line break (read from a record's string field) stays a comment: it must
// not put a data point into the .dat file.
TEST(ChartStyle, ALabelWithALineBreakAddsNoDataPoint) {
  Chart c = byte_chart();
  c.series[0].label = "dgx1\n4 1000\r";
  const fs::path dir = fs::temp_directory_path() / ("scalelab_label_" + std::to_string(getpid()));
  fs::remove_all(dir);
  const ChartFiles f = write_chart(c, (dir / "nl").string());
  std::ifstream in(f.dat);
  std::string line;
  while (std::getline(in, line)) EXPECT_NE(line, "4 1000") << "a label's line became data";
  std::ifstream again(f.dat);
  std::stringstream dat;
  dat << again.rdbuf();
  EXPECT_NE(dat.str().find("# series 0: dgx1\n# 4 1000 \n"), std::string::npos) << dat.str();
  fs::remove_all(dir);
}

// One epoch, one rank count: an axis of one value gets a range around it, so gnuplot does not
// print "Warning: empty x range" among the command's output.
TEST(ChartStyle, AnAxisOfOneValueGetsARangeAroundIt) {
  Chart c;
  c.series.push_back({.label = "one", .points = {{1, 15.5}, {1, 15.5}}});
  const std::string gp = gnuplot_script(c, "o.dat", "o");
  EXPECT_NE(gp.find("set xrange [0.9:1.1]\n"), std::string::npos) << gp;
  EXPECT_NE(gp.find("set yrange [13.95:17.05]\n"), std::string::npos) << gp;
  c.series[0].points = {{1, 2}, {2, 3}};
  EXPECT_EQ(gnuplot_script(c, "o.dat", "o").find("range ["), std::string::npos) << "axes with a spread keep gnuplot's ranges";
}

// Nothing to draw, or more series than a chart can show: one input error before any file.
TEST(ChartStyle, AnEmptyChartOrTooManySeriesIsRefusedBeforeAnyFile) {
  const fs::path dir = fs::temp_directory_path() / ("scalelab_empty_" + std::to_string(getpid()));
  fs::remove_all(dir);
  Chart empty;
  empty.log_x = true;
  empty.series.push_back({.label = "none", .points = {{0, 1}, {-2, 3}}});  // nothing positive on the log axis
  EXPECT_THROW((void)write_chart(empty, (dir / "e").string()), Error);
  Chart many;
  for (std::size_t i = 0; i <= kMaxChartSeries; ++i) many.series.push_back({.label = "s", .points = {{1, 1}}});
  EXPECT_THROW((void)write_chart(many, (dir / "m").string()), Error);
  EXPECT_FALSE(fs::exists(dir / "e.dat"));
  EXPECT_FALSE(fs::exists(dir / "m.dat"));
  fs::remove_all(dir);
}

TEST(ChartStyle, ByteTicsOnTheFirstAndLastPointAreDrawn) {
  Chart c;
  c.log_x = true;
  c.log_x_base = 2;
  c.x_bytes = true;
  Series s{"measured", {}};
  for (double x = 65536; x <= 64.0 * (1 << 20); x *= 2) s.points.emplace_back(x, 1.0 + x / (1 << 20));
  c.series.push_back(s);
  const fs::path dir = fs::temp_directory_path() / ("scalelab_style_ends_" + std::to_string(getpid()));
  fs::remove_all(dir);
  const ChartFiles f = write_chart(c, (dir / "ends").string());
  std::ifstream in(f.svg);
  std::stringstream svg;
  svg << in.rdbuf();
  for (const char* tic : {"64 KiB", "256 KiB", "1 MiB", "4 MiB", "16 MiB", "64 MiB"}) {
    EXPECT_NE(svg.str().find(std::string(">") + tic + "<"), std::string::npos) << tic;
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace scalelab::report
