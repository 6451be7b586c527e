#include "core/json_text.h"

#include <string>

namespace scalelab {

namespace {

template <class Input>
nlohmann::json parse_limited(Input&& input) {
  // The callback sees each value as it is opened; depth counts the enclosing levels.
  const auto limit = [](int depth, nlohmann::json::parse_event_t event, nlohmann::json&) {
    if ((event == nlohmann::json::parse_event_t::object_start || event == nlohmann::json::parse_event_t::array_start) &&
        depth >= kMaxJsonDepth) {
      throw JsonTextError("nested more than " + std::to_string(kMaxJsonDepth) + " levels deep");
    }
    return true;
  };
  try {
    return nlohmann::json::parse(std::forward<Input>(input), limit);
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
nlohmann::json parse_json_text(std::istream& in) { return parse_limited(in); }

}  // namespace scalelab
