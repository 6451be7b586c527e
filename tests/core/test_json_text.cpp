// parse_json_text: the one parser of outside JSON. Nesting beyond kMaxJsonDepth is refused at parse
// time, because copying, comparing or dumping such a document recurses once per level and a
// 60 KB file of '[' overflowed the stack (found by fuzz_machine_file).
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "core/json_text.h"

namespace scalelab {
namespace {

std::string nested_arrays(int depth) { return std::string(depth, '[') + std::string(depth, ']'); }

TEST(JsonText, ParsesOrdinaryDocuments) {
  const nlohmann::json j = parse_json_text(R"({"a": [1, 2, {"b": "c"}]})");
  EXPECT_EQ(j["a"][2]["b"], "c");
  std::istringstream in(R"({"x": 1.5})");
  EXPECT_EQ(parse_json_text(in)["x"], 1.5);
}

TEST(JsonText, AcceptsNestingUpToTheLimit) {
  EXPECT_NO_THROW((void)parse_json_text(nested_arrays(kMaxJsonDepth)));
}

TEST(JsonText, RefusesNestingBeyondTheLimit) {
  try {
    (void)parse_json_text(nested_arrays(kMaxJsonDepth + 1));
    FAIL() << "no error for " << kMaxJsonDepth + 1 << " levels";
  } catch (const JsonTextError& e) {
    EXPECT_NE(std::string(e.what()).find("nested more than 64 levels"), std::string::npos) << e.what();
  }
  const std::string deep_object = "{\"a\":" + nested_arrays(100000) + "}";
  EXPECT_THROW((void)parse_json_text(deep_object), JsonTextError);
  std::istringstream in(nested_arrays(100000));
  EXPECT_THROW((void)parse_json_text(in), JsonTextError);
}

TEST(JsonText, BracketsInsideStringsDoNotCountAsNesting) {
  // A string of 100 '[' (and an escaped quote before more of them) at the deepest allowed level.
  const std::string text = std::string(kMaxJsonDepth, '[') + "\"" + std::string(100, '[') + "\\\"" + std::string(100, '{') + "\"" +
                           std::string(kMaxJsonDepth, ']');
  nlohmann::json j;
  ASSERT_NO_THROW(j = parse_json_text(text));
  const nlohmann::json* v = &j;
  for (int i = 1; i < kMaxJsonDepth; ++i) v = &(*v)[0];
  EXPECT_EQ((*v)[0].get<std::string>(), std::string(100, '[') + "\"" + std::string(100, '{'));
}

TEST(JsonText, BadSyntaxAndHugeNumbersAreJsonTextErrors) {
  EXPECT_THROW((void)parse_json_text("{\"a\": }"), JsonTextError);
  EXPECT_THROW((void)parse_json_text("[1e99999]"), JsonTextError);
  EXPECT_THROW((void)parse_json_text(""), JsonTextError);
}

// nlohmann keeps the last of two equal keys: a machine file's second "nodes" replaced the first
// without a word. Equal keys in one object are refused, at any depth and past 32 keys; the same key
// in different objects, as a value, or inside a string is not a repeat.
TEST(JsonText, AKeyTwiceInOneObjectIsRefused) {
  for (const char* text : {R"({"nodes": 5, "nodes": 1})", R"({"a": {"b": 1, "c": [1, {"d": 2, "d": 3}]}})"}) {
    try {
      (void)parse_json_text(text);
      ADD_FAILURE() << text << " was accepted";
    } catch (const JsonTextError& e) {
      EXPECT_NE(std::string(e.what()).find("appears twice in one object"), std::string::npos) << e.what();
    }
  }
  std::string many = "{";
  for (int i = 0; i < 100; ++i) many += "\"k" + std::to_string(i) + "\": " + std::to_string(i) + ", ";
  EXPECT_NO_THROW((void)parse_json_text(many + "\"last\": 0}"));
  EXPECT_THROW((void)parse_json_text(many + "\"k7\": 0}"), JsonTextError);
  EXPECT_NO_THROW((void)parse_json_text(R"([{"a": 1}, {"a": 2}, {"b": "a", "c": "\"a\": 1, \"a\": 2"}])"));
  EXPECT_NO_THROW((void)parse_json_text(R"({"x": {"a": 1}, "y": {"a": 2}, "a": 3})"));
}

}  // namespace
}  // namespace scalelab
