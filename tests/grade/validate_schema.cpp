// A validator for the subset of JSON Schema (draft-07) that tests/grade's schemas use: type (one
// or a list), required, properties, additionalProperties (false or a schema), items, enum and
// minimum. A keyword outside that subset is an error, so that no rule is silently skipped.
//   validate_schema SCHEMA.json DOCUMENT.json
// Exit status 0: valid; 1: not valid (one line per violation on stderr, with its JSON pointer); 2: a file
// that cannot be read or parsed, or an unsupported keyword.
#include <cstdio>
#include <fstream>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

namespace {

using nlohmann::json;

struct Unsupported {
  std::string what;
};

bool has_type(const json& v, const std::string& t) {
  if (t == "object") return v.is_object();
  if (t == "array") return v.is_array();
  if (t == "string") return v.is_string();
  if (t == "integer") return v.is_number_integer();
  if (t == "number") return v.is_number();
  if (t == "boolean") return v.is_boolean();
  if (t == "null") return v.is_null();
  throw Unsupported{"type \"" + t + "\""};
}

int check(const json& schema, const json& v, const std::string& at) {
  static const std::set<std::string> known = {"$schema", "$comment", "title", "description", "type", "required", "properties",
                                              "additionalProperties", "items", "enum", "minimum"};
  int errors = 0;
  auto fail = [&](const std::string& why) {
    std::fprintf(stderr, "%s: %s\n", at.empty() ? "/" : at.c_str(), why.c_str());
    ++errors;
  };
  for (const auto& [k, _] : schema.items()) {
    if (!known.count(k)) throw Unsupported{"keyword \"" + k + "\" at " + at};
  }
  if (schema.contains("type")) {
    const json& t = schema["type"];
    bool ok = false;
    if (t.is_string()) ok = has_type(v, t);
    for (const auto& one : t.is_array() ? t : json::array()) ok = ok || has_type(v, one);
    if (!ok) {
      fail("is " + std::string(v.type_name()) + ", expected " + t.dump());
      return errors;
    }
  }
  if (schema.contains("enum")) {
    bool ok = false;
    for (const auto& e : schema["enum"]) ok = ok || e == v;
    if (!ok) fail(v.dump() + " is not one of " + schema["enum"].dump());
  }
  if (schema.contains("minimum") && v.is_number() && v.get<double>() < schema["minimum"].get<double>()) {
    fail(v.dump() + " is below the minimum " + schema["minimum"].dump());
  }
  if (v.is_object()) {
    for (const auto& r : schema.value("required", json::array())) {
      if (!v.contains(r.get<std::string>())) fail("lacks the required \"" + r.get<std::string>() + "\"");
    }
    const json props = schema.value("properties", json::object());
    for (const auto& [k, value] : v.items()) {
      if (props.contains(k)) {
        errors += check(props[k], value, at + "/" + k);
      } else if (schema.contains("additionalProperties")) {
        const json& extra = schema["additionalProperties"];
        if (extra.is_boolean() && !extra.get<bool>()) {
          fail("has \"" + k + "\", which the schema does not allow");
        } else if (extra.is_object()) {
          errors += check(extra, value, at + "/" + k);
        }
      }
    }
  }
  if (v.is_array() && schema.contains("items")) {
    for (std::size_t i = 0; i < v.size(); ++i) errors += check(schema["items"], v[i], at + "/" + std::to_string(i));
  }
  return errors;
}

bool load(const char* path, json& out) {
  std::ifstream in(path);
  if (!in) {
    std::fprintf(stderr, "validate_schema: cannot read %s\n", path);
    return false;
  }
  out = json::parse(in, nullptr, false);
  if (out.is_discarded()) {
    std::fprintf(stderr, "validate_schema: %s is not JSON\n", path);
    return false;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: validate_schema SCHEMA.json DOCUMENT.json\n");
    return 2;
  }
  json schema, doc;
  if (!load(argv[1], schema) || !load(argv[2], doc)) return 2;
  try {
    const int errors = check(schema, doc, "");
    if (errors == 0) std::printf("%s: valid against %s\n", argv[2], argv[1]);
    return errors == 0 ? 0 : 1;
  } catch (const Unsupported& u) {
    std::fprintf(stderr, "validate_schema: %s: not supported by this validator\n", u.what.c_str());
    return 2;
  }
}
