// The CSV has nvidia-smi's --format=csv shape: header of query names with bracketed units, rows of
// ", "-separated values with units, "[N/A]" for what a GPU does not report, nvidia-smi's timestamp.
#include <gtest/gtest.h>

#include <ctime>
#include <regex>
#include <sstream>

#include "monitor/csv.h"

namespace scalelab::monitor {
namespace {

std::vector<std::string> fields(const std::string& line) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (std::size_t at; (at = line.find(", ", start)) != std::string::npos; start = at + 2) {
    out.push_back(line.substr(start, at - start));
  }
  out.push_back(line.substr(start));
  return out;
}

TEST(Csv, HeaderNamesTheQueriesWithNvidiaSmiUnits) {
  const std::vector<std::string> expected = {"timestamp",          "index",           "name",
                                             "utilization.gpu [%]", "memory.used [MiB]", "memory.total [MiB]",
                                             "power.draw [W]",     "temperature.gpu"};
  EXPECT_EQ(fields(csv_header()), expected);
}

TEST(Csv, RowCarriesEachValueWithItsUnit) {
  GpuDevice d{3, "NVIDIA H100 80GB HBM3"};
  GpuSample s;
  s.index = 3;
  s.utilization_pct = 97;
  s.memory_used_mib = 40960;
  s.memory_total_mib = 81559;
  s.power_w = 612.345;
  s.temperature_c = 61;
  std::string out;
  append_csv_row(out, "2026/11/22 08:15:02.123", d, s);
  ASSERT_EQ(out.back(), '\n');
  out.pop_back();
  const std::vector<std::string> expected = {"2026/11/22 08:15:02.123", "3", "NVIDIA H100 80GB HBM3", "97 %",
                                             "40960 MiB", "81559 MiB", "612.35 W", "61"};
  EXPECT_EQ(fields(out), expected);
  EXPECT_EQ(fields(out).size(), fields(csv_header()).size());
}

TEST(Csv, QuantitiesNotReportedAreNotAvailable) {
  GpuSample s;  // every quantity kNotAvailable
  std::string out;
  append_csv_row(out, "t", GpuDevice{0, "g"}, s);
  out.pop_back();
  const auto f = fields(out);
  ASSERT_EQ(f.size(), 8u);
  for (std::size_t i = 3; i < f.size(); ++i) EXPECT_EQ(f[i], "[N/A]") << "column " << i;
}

TEST(Csv, RowsAppendWithoutReplacing) {
  std::string out;
  append_csv_row(out, "a", GpuDevice{0, "g0"}, GpuSample{});
  append_csv_row(out, "a", GpuDevice{1, "g1"}, GpuSample{});
  EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 2);
  EXPECT_NE(out.find(", g1, "), std::string::npos);
}

TEST(Csv, TimestampIsNvidiaSmisLocalTimeWithMilliseconds) {
  const auto now = std::chrono::system_clock::now();
  const std::string ts = nvidia_smi_timestamp(now);
  ASSERT_TRUE(std::regex_match(ts, std::regex(R"(\d{4}/\d{2}/\d{2} \d{2}:\d{2}:\d{2}\.\d{3})"))) << ts;
  // Read back as local time, it is the same second and millisecond.
  std::tm tm{};
  std::istringstream in(ts);
  char slash = 0, colon = 0, dot = 0;
  int ms = 0;
  in >> tm.tm_year >> slash >> tm.tm_mon >> slash >> tm.tm_mday >> tm.tm_hour >> colon >> tm.tm_min >> colon >>
      tm.tm_sec >> dot >> ms;
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  tm.tm_isdst = -1;
  const auto since_epoch = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count();
  EXPECT_EQ(static_cast<long long>(std::mktime(&tm)), since_epoch / 1000);
  EXPECT_EQ(ms, since_epoch % 1000);
}

}  // namespace
}  // namespace scalelab::monitor
