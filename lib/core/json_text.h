// JSON text from outside the program (machine, workload and device files, result records,
// checkpoint headers), parsed with a nesting limit. nlohmann's parser is iterative, but copying,
// comparing and dump() recurse once per level, so a file of a few kilobytes of '[' would
// overflow the stack in whatever walks it next. No file scalelab reads nests deeper than about
// ten levels.
//
//   const nlohmann::json doc = parse_json_text(text);  // throws JsonTextError on bad syntax or depth
#pragma once
#include <istream>
#include <stdexcept>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace scalelab {

inline constexpr int kMaxJsonDepth = 64;

// Bad syntax, a number beyond double's range, or nesting deeper than kMaxJsonDepth; what() says
// which, without a file name (the caller adds it).
class JsonTextError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A JSON library error's message for a person: without the library's "[json.exception.type_error.302] "
// tag ("type must be number, but is string").
[[nodiscard]] std::string plain_json_error(const std::exception& e);

[[nodiscard]] nlohmann::json parse_json_text(std::string_view text);
[[nodiscard]] nlohmann::json parse_json_text(std::istream& in);

}  // namespace scalelab
