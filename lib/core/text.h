// Lists as people type them on a command line: "1,2,4", "a.json,b.json", "0,3". One splitter, so
// every flag that takes a list reads it the same way; and one joiner for the lists messages name.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace scalelab {

// The items of `text` between separators, in order, empty items kept ("1,,2" -> "1", "", "2";
// "1," -> "1", ""), so a caller can reject them or skip them; "" gives no items.
[[nodiscard]] std::vector<std::string> split_list(std::string_view text, char separator = ',');
// The same without the empty items ("a,,b," -> "a", "b"): lists where a stray comma is harmless.
[[nodiscard]] std::vector<std::string> list_items(std::string_view text, char separator = ',');
// The other way, for messages: "ring, tree, library" ("" for no items).
[[nodiscard]] std::string join_list(const std::vector<std::string>& items, std::string_view separator = ", ");

}  // namespace scalelab
