// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// The JSON reader behind the Cloud Storage client (src/internal/json_reader.h):
// values, escapes and the byte offset of malformed input.
#include "internal/json_reader.h"

#include <string>

#include "gtest/gtest.h"

namespace dataecho::internal {
namespace {

using Type = JsonValue::Type;

TEST(JsonReaderTest, ReadsEveryKindOfValue) {
  absl::StatusOr<JsonValue> v = ParseJson(R"( {
      "name": "train/part-0.tfrecord", "size": "1024", "generation": 17,
      "ratio": -1.5e3, "done": true, "failed": false, "owner": null,
      "items": [1, "two", [], {}] } )");
  ASSERT_TRUE(v.ok()) << v.status();
  ASSERT_EQ(v->type, Type::kObject);
  EXPECT_EQ(v->fields.size(), 8u);
  EXPECT_EQ(v->String("name"), "train/part-0.tfrecord");
  EXPECT_EQ(v->String("size"), "1024");
  // A number keeps its literal; String() reads it too.
  EXPECT_EQ(v->Find("generation")->type, Type::kNumber);
  EXPECT_EQ(v->String("generation"), "17");
  EXPECT_EQ(v->String("ratio"), "-1.5e3");
  EXPECT_EQ(v->Find("done")->type, Type::kBool);
  EXPECT_TRUE(v->Find("done")->boolean);
  EXPECT_FALSE(v->Find("failed")->boolean);
  EXPECT_EQ(v->Find("owner")->type, Type::kNull);
  EXPECT_EQ(v->String("done"), "");     // not a string or number
  EXPECT_EQ(v->String("missing"), "");  // absent
  EXPECT_EQ(v->Find("missing"), nullptr);

  const JsonValue& items = *v->Find("items");
  ASSERT_EQ(items.type, Type::kArray);
  ASSERT_EQ(items.items.size(), 4u);
  EXPECT_EQ(items.items[0].text, "1");
  EXPECT_EQ(items.items[1].text, "two");
  EXPECT_EQ(items.items[2].type, Type::kArray);
  EXPECT_TRUE(items.items[2].items.empty());
  EXPECT_EQ(items.items[3].type, Type::kObject);
  EXPECT_TRUE(items.items[3].fields.empty());
}

TEST(JsonReaderTest, TopLevelScalars) {
  EXPECT_EQ(ParseJson("\"x\"")->text, "x");
  EXPECT_EQ(ParseJson("42")->type, Type::kNumber);
  EXPECT_EQ(ParseJson("null")->type, Type::kNull);
  EXPECT_TRUE(ParseJson(" true ")->boolean);
}

TEST(JsonReaderTest, DecodesEscapes) {
  absl::StatusOr<JsonValue> v = ParseJson(R"("a\"b\\c\/d\b\f\n\r\t")");
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(v->text, "a\"b\\c/d\b\f\n\r\t");
  // \u escapes become UTF-8: 1, 2 and 3 bytes, and a surrogate pair (4 bytes).
  absl::StatusOr<JsonValue> u = ParseJson(R"("\u0041\u00e9\u20AC\ud83d\ude00")");
  ASSERT_TRUE(u.ok()) << u.status();
  EXPECT_EQ(u->text, "A\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80");
  // Bytes that are not escaped pass through unchanged (UTF-8 object names).
  EXPECT_EQ(ParseJson("\"caf\xC3\xA9\"")->text, "caf\xC3\xA9");
}

TEST(JsonReaderTest, DuplicateKeysKeepTheLastValue) {
  absl::StatusOr<JsonValue> v = ParseJson(R"({"a": "1", "a": "2", "b": [1], "b": [2, 3]})");
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(v->String("a"), "2");  // not "12"
  ASSERT_EQ(v->Find("b")->items.size(), 2u);
  EXPECT_EQ(v->Find("b")->items[0].text, "2");
}

// Malformed input is INVALID_ARGUMENT naming the byte where reading stopped.
TEST(JsonReaderTest, MalformedInputNamesTheOffset) {
  struct Case {
    const char* text;
    size_t offset;
  } cases[] = {
      {"", 0},                 // nothing
      {"   ", 3},              // only space
      {R"({"a": })", 6},       // a value is missing
      {R"({"a" 1})", 5},       // no colon
      {R"({a: 1})", 1},        // unquoted key
      {"[1, 2", 5},            // unterminated array
      {R"({"a": 1,})", 8},     // trailing comma
      {R"("abc)", 4},          // unterminated string
      {R"("\x")", 3},          // unknown escape
      {R"("\u12G4")", 6},      // bad hex digit (the offset is just past it)
      {"{} x", 3},             // trailing garbage
      {"tru", 0},              // truncated literal
      {R"({"a": [1 2]})", 9},  // missing comma
  };
  for (const Case& c : cases) {
    absl::StatusOr<JsonValue> v = ParseJson(c.text);
    ASSERT_FALSE(v.ok()) << "'" << c.text << "'";
    EXPECT_EQ(v.status().code(), absl::StatusCode::kInvalidArgument) << c.text;
    EXPECT_EQ(v.status().message(), "malformed JSON at byte " + std::to_string(c.offset))
        << "'" << c.text << "'";
  }
}

TEST(JsonReaderTest, NestingIsBounded) {
  // 64 levels below the top are read; one more is refused, not a stack overflow.
  const std::string deep_ok = std::string(65, '[') + std::string(65, ']');
  EXPECT_TRUE(ParseJson(deep_ok).ok());
  const std::string too_deep = std::string(66, '[') + std::string(66, ']');
  absl::StatusOr<JsonValue> v = ParseJson(too_deep);
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.status().message(), "malformed JSON at byte 65");
  EXPECT_FALSE(ParseJson(std::string(100000, '[')).ok());
}

}  // namespace
}  // namespace dataecho::internal
