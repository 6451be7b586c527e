#include "core/json_text.h"

#include <iterator>
#include <string>

namespace scalelab {

namespace {

// Throws when arrays and objects nest deeper than kMaxJsonDepth anywhere outside strings: one
// linear pass before parsing. (nlohmann's parse callback could count the depth as it goes, but its
// callback parser is quadratic in the number of values: a 170 MB timeline took five minutes.)
void check_depth(std::string_view text) {
  int depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;  // the escaped character, whatever it is, does not end the string
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxJsonDepth) throw JsonTextError("nested more than " + std::to_string(kMaxJsonDepth) + " levels deep");
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
}

nlohmann::json parse_limited(std::string_view text) {
  check_depth(text);
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {  // parse_error, or out_of_range for a number beyond double
    throw JsonTextError(plain_json_error(e));
  }
}

}  // namespace

std::string plain_json_error(const std::exception& e) {
  const std::string what = e.what();
  if (what.rfind("[json.exception.", 0) == 0) {
    const auto end = what.find("] ");
    if (end != std::string::npos) return what.substr(end + 2);
  }
  return what;
}

nlohmann::json parse_json_text(std::string_view text) { return parse_limited(text); }
nlohmann::json parse_json_text(std::istream& in) {
  const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  return parse_limited(text);
}

}  // namespace scalelab
