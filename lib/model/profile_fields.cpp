// Reading a calibration profile's fields (see profile_fields.h).
#include "model/profile_fields.h"

#include <cmath>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "core/error.h"

namespace scalelab::model::profile_fields {

[[noreturn]] void bad_field(const std::string& origin, const std::string& field, const std::string& problem) {
  throw_input(origin + ": \"" + field + "\" " + problem + "; run 'scalelab calibrate' again");
}

double number(const nlohmann::json& j, const char* key, const std::string& origin, const std::string& field,
              double min, bool strict, std::optional<double> fallback, double max) {
  if (!j.contains(key)) {
    if (fallback) return *fallback;
    bad_field(origin, field, "is missing");
  }
  const nlohmann::json& v = j[key];
  if (!v.is_number()) bad_field(origin, field, "is not a number");
  const double x = v.get<double>();
  char text[64];
  std::snprintf(text, sizeof text, "%g", x);
  if (!std::isfinite(x)) bad_field(origin, field, std::string("is ") + text + ", not a finite number");
  if (strict ? !(x > min) : !(x >= min)) {
    std::snprintf(text + 32, 32, "%g", min);
    bad_field(origin, field, std::string("is ") + text + "; it must be " + (strict ? "above " : "at least ") + (text + 32));
  }
  if (x > max) {
    std::snprintf(text + 32, 32, "%g", max);
    bad_field(origin, field, std::string("is ") + text + ", beyond any machine (at most " + (text + 32) + ")");
  }
  return x;
}

int whole(const nlohmann::json& j, const char* key, const std::string& origin, const std::string& field, int min,
          int fallback) {
  if (!j.contains(key)) return fallback;
  const double x = number(j, key, origin, field, min, false);
  if (x != std::floor(x) || x > std::numeric_limits<int>::max()) {
    char text[32];
    std::snprintf(text, sizeof text, "%g", x);
    bad_field(origin, field, std::string("is ") + text + "; it must be a whole number up to " +
                                 std::to_string(std::numeric_limits<int>::max()));
  }
  return static_cast<int>(x);
}

}  // namespace scalelab::model::profile_fields
