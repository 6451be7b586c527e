// Console tables in the style of nccl-tests: fixed-width right-aligned columns, header lines
// starting with '#' (so scripts that skip comments see only data rows), optional group titles
// centred above a span of columns ("out-of-place", "in-place"), and rows printed as they come.
//
//   ConsoleTable t({{"size", "(B)", 12}, {"time", "(us)", 8}}, {{"out-of-place", 1, 1}});
//   t.print_header(std::cout);
//   t.print_row(std::cout, {"1048576", fixed(123.4, 1)});
#pragma once
#include <cstddef>
#include <ostream>
#include <string>
#include <vector>

namespace scalelab::report {

struct Column {
  std::string name;  // "busbw"
  std::string unit;  // "(GB/s)", or "" for none
  int width = 8;     // characters, right-aligned
};

struct ColumnGroup {
  std::string title;  // "in-place"
  std::size_t first = 0;
  std::size_t count = 1;
};

class ConsoleTable {
 public:
  explicit ConsoleTable(std::vector<Column> columns, std::vector<ColumnGroup> groups = {});

  // Group titles (if any), column names and units, each line starting with '#'.
  void print_header(std::ostream& out) const;
  // One data row; cells.size() must equal the number of columns.
  void print_row(std::ostream& out, const std::vector<std::string>& cells) const;
  [[nodiscard]] std::string format_row(const std::vector<std::string>& cells, char lead = ' ') const;

 private:
  std::vector<Column> columns_;
  std::vector<ColumnGroup> groups_;
};

// "123.46" with `precision` decimals; "N/A" for NaN.
[[nodiscard]] std::string fixed(double value, int precision);

}  // namespace scalelab::report
