// Fixed-width console tables (table.h).
#include "report/table.h"

#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <utility>

namespace scalelab::report {

ConsoleTable::ConsoleTable(std::vector<Column> columns, std::vector<ColumnGroup> groups)
    : columns_(std::move(columns)), groups_(std::move(groups)) {}

std::string ConsoleTable::format_row(const std::vector<std::string>& cells, char lead) const {
  if (cells.size() != columns_.size()) throw std::logic_error("ConsoleTable: row has the wrong number of cells");
  std::string line(1, lead);
  for (std::size_t i = 0; i < cells.size(); ++i) {
    const auto width = static_cast<std::size_t>(columns_[i].width);
    line += ' ';
    if (cells[i].size() < width) line.append(width - cells[i].size(), ' ');
    line += cells[i];
  }
  return line;
}

void ConsoleTable::print_header(std::ostream& out) const {
  if (!groups_.empty()) {
    // Each column occupies 1 + width characters after the leading '#'.
    std::vector<std::size_t> start(columns_.size() + 1, 1);
    for (std::size_t i = 0; i < columns_.size(); ++i) start[i + 1] = start[i] + 1 + static_cast<std::size_t>(columns_[i].width);
    std::string line(start.back(), ' ');
    line[0] = '#';
    for (const auto& g : groups_) {
      const std::size_t lo = start[g.first] + 1, hi = start[g.first + g.count];
      const std::size_t span = hi - lo;
      if (g.title.size() > span) continue;
      const std::size_t at = lo + (span - g.title.size()) / 2;
      line.replace(at, g.title.size(), g.title);
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out << line << '\n';
  }
  std::vector<std::string> names, units;
  bool any_unit = false;
  for (const auto& c : columns_) {
    names.push_back(c.name);
    units.push_back(c.unit);
    any_unit = any_unit || !c.unit.empty();
  }
  const auto trimmed = [](std::string line) {
    while (!line.empty() && line.back() == ' ') line.pop_back();
    return line;
  };
  out << trimmed(format_row(names, '#')) << '\n';
  if (any_unit) out << trimmed(format_row(units, '#')) << '\n';
}

void ConsoleTable::print_row(std::ostream& out, const std::vector<std::string>& cells) const {
  out << format_row(cells) << '\n' << std::flush;
}

std::string fixed(double value, int precision) {
  if (std::isnan(value)) return "N/A";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", precision, value);
  return buf;
}

}  // namespace scalelab::report
