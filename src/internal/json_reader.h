// Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
//
// json_reader.h: a small JSON parser for service responses (GCS metadata
// and listings). Internal.
#ifndef DATAECHO_SRC_INTERNAL_JSON_READER_H_
#define DATAECHO_SRC_INTERNAL_JSON_READER_H_

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace dataecho::internal {

struct JsonValue {
  enum class Type { kNull, kBool, kNumber, kString, kArray, kObject };
  Type type = Type::kNull;
  bool boolean = false;
  std::string text;  // kString: the decoded string; kNumber: its literal
  std::vector<JsonValue> items;
  std::map<std::string, JsonValue> fields;

  // The field `name` of an object, or nullptr.
  const JsonValue* Find(std::string_view name) const;
  // A string field (or a number's literal); "" if absent.
  std::string String(std::string_view name) const;
};

// INVALID_ARGUMENT (naming the byte offset) on malformed input. Of a name
// repeated in an object, the last value is kept.
absl::StatusOr<JsonValue> ParseJson(std::string_view text);

}  // namespace dataecho::internal

#endif  // DATAECHO_SRC_INTERNAL_JSON_READER_H_
