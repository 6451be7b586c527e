// split_list, list_items and join_list (core/text.h).
#include "core/text.h"

namespace scalelab {

std::vector<std::string> split_list(std::string_view text, char separator) {
  std::vector<std::string> items;
  if (text.empty()) return items;
  std::size_t start = 0;
  while (true) {
    const std::size_t end = text.find(separator, start);
    items.emplace_back(text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  return items;
}

std::vector<std::string> list_items(std::string_view text, char separator) {
  std::vector<std::string> items = split_list(text, separator);
  std::erase(items, std::string());
  return items;
}

std::string join_list(const std::vector<std::string>& items, std::string_view separator) {
  std::string out;
  for (const auto& item : items) {
    if (!out.empty()) out += separator;
    out += item;
  }
  return out;
}

}  // namespace scalelab
