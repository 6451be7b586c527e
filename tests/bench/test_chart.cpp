// Charts keep their data and script beside the pictures: the .dat holds one block per series,
// the .gp refers to the .dat by name and draws both pictures, and a missing gnuplot is one error
// naming the package after the .dat and .gp are written.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/error.h"
#include "report/chart.h"

namespace scalelab::report {
namespace {

namespace fs = std::filesystem;

Chart sample_chart() {
  Chart c;
  c.title = "it's a test";
  c.x_label = "size";
  c.y_label = "GB/s";
  c.log_x = true;
  c.x_format = "%.0b%BB";
  c.series.push_back({"ring", {{1024, 1.5}, {2048, 2.5}}});
  c.series.push_back({"library", {{1024, 1.0}, {2048, 2.0}}});
  return c;
}

std::string read_all(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

fs::path fresh_dir(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("scalelab_chart_" + name + "_" + std::to_string(getpid()));
  fs::remove_all(dir);
  return dir;
}

TEST(Chart, ScriptPlotsEverySeriesFromTheDataFileByName) {
  const std::string gp = gnuplot_script(sample_chart(), "busbw.dat", "busbw");
  EXPECT_NE(gp.find("set title 'it''s a test'"), std::string::npos);
  EXPECT_NE(gp.find("set logscale x 2"), std::string::npos);
  EXPECT_NE(gp.find("'busbw.dat' index 0 using 1:2 title 'ring'"), std::string::npos);
  EXPECT_NE(gp.find("'busbw.dat' index 1 using 1:2 title 'library'"), std::string::npos);
  EXPECT_NE(gp.find("set terminal svg"), std::string::npos);
  EXPECT_NE(gp.find("set output 'busbw.svg'"), std::string::npos);
  EXPECT_NE(gp.find("set terminal pngcairo"), std::string::npos);
  EXPECT_NE(gp.find("set output 'busbw.png'"), std::string::npos);
}

TEST(Chart, WritesDataScriptAndPictures) {
  const fs::path dir = fresh_dir("ok");
  const ChartFiles f = write_chart(sample_chart(), (dir / "busbw").string());
  const std::string dat = read_all(f.dat);
  EXPECT_NE(dat.find("# series 0: ring\n1024 1.5\n2048 2.5\n\n\n# series 1: library\n1024 1\n2048 2\n"), std::string::npos)
      << dat;
  EXPECT_TRUE(fs::exists(f.gp));
  EXPECT_GT(fs::file_size(f.svg), 1000u);
  EXPECT_GT(fs::file_size(f.png), 1000u);
  fs::remove_all(dir);
}

TEST(Chart, MissingGnuplotNamesThePackageAndKeepsDataAndScript) {
  const fs::path dir = fresh_dir("nognuplot");
  const std::string old_path = std::getenv("PATH") != nullptr ? std::getenv("PATH") : "";
  setenv("PATH", dir.c_str(), 1);  // an empty folder: no gnuplot there
  try {
    (void)write_chart(sample_chart(), (dir / "busbw").string());
    ADD_FAILURE() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("gnuplot-nox"), std::string::npos);
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
  }
  setenv("PATH", old_path.c_str(), 1);
  EXPECT_TRUE(fs::exists(dir / "busbw.dat"));
  EXPECT_TRUE(fs::exists(dir / "busbw.gp"));
  EXPECT_FALSE(fs::exists(dir / "busbw.svg"));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace scalelab::report
