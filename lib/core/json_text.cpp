#include "core/json_text.h"

#include <iterator>
#include <string>
#include <unordered_set>
#include <vector>

namespace scalelab {

namespace {

// Throws when arrays and objects nest deeper than kMaxJsonDepth anywhere outside strings, or when
// one object holds a key twice (nlohmann keeps the last, so a machine file's second "nodes" would
// silently replace the first): one linear pass before parsing. (nlohmann's parse callback could
// count the depth as it goes, but its callback parser is quadratic in the number of values: a
// 170 MB timeline took five minutes.) Keys are compared as written, escapes and all.
void check_depth_and_keys(std::string_view text) {
  struct Frame {
    bool object = false;
    bool expect_key = false;
    std::vector<std::string_view> keys;          // reused from object to object at this depth
    std::unordered_set<std::string_view> many;   // an object past 32 keys: searched by hash
  };
  std::vector<Frame> frames(kMaxJsonDepth + 1);
  int depth = 0;
  bool in_string = false;
  std::size_t string_start = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;  // the escaped character, whatever it is, does not end the string
      } else if (c == '"') {
        in_string = false;
        Frame& f = frames[static_cast<std::size_t>(depth)];
        if (depth > 0 && f.object && f.expect_key) {
          const std::string_view key = text.substr(string_start + 1, i - string_start - 1);
          bool seen = false;
          if (f.keys.size() < 32) {
            for (const std::string_view k : f.keys) seen = seen || k == key;
            f.keys.push_back(key);
          } else {
            if (f.many.empty()) f.many.insert(f.keys.begin(), f.keys.end());
            seen = !f.many.insert(key).second;
          }
          if (seen) {
            throw JsonTextError("the key \"" + std::string(key) +
                                "\" appears twice in one object (the second would replace the first); give it once");
          }
          f.expect_key = false;
        }
      }
    } else if (c == '"') {
      in_string = true;
      string_start = i;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxJsonDepth) throw JsonTextError("nested more than " + std::to_string(kMaxJsonDepth) + " levels deep");
      Frame& f = frames[static_cast<std::size_t>(depth)];
      f.object = c == '{';
      f.expect_key = f.object;
      f.keys.clear();
      if (!f.many.empty()) f.many.clear();
    } else if (c == ']' || c == '}') {
      if (depth > 0) --depth;
    } else if (c == ',' && depth > 0 && frames[static_cast<std::size_t>(depth)].object) {
      frames[static_cast<std::size_t>(depth)].expect_key = true;
    }
  }
}

nlohmann::json parse_limited(std::string_view text) {
  check_depth_and_keys(text);
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
