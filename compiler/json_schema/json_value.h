// A JSON value owned by the Schema (enum/const literals), independent of the
// parser's buffers. Numbers are exact decimals; object members keep their
// order (the order the schema wrote them in).
#ifndef MASKD_COMPILER_JSON_SCHEMA_JSON_VALUE_H_
#define MASKD_COMPILER_JSON_SCHEMA_JSON_VALUE_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/json_schema/decimal.h"

namespace maskd::json_schema {

class JsonValue {
 public:
  enum class Kind { kNull, kBoolean, kNumber, kString, kArray, kObject };

  JsonValue() = default;  // null
  static JsonValue Boolean(bool b);
  static JsonValue Number(Decimal d);
  static JsonValue String(std::string s);
  static JsonValue Array(std::vector<JsonValue> items);
  static JsonValue Object(std::vector<std::pair<std::string, JsonValue>> members);

  Kind kind() const { return kind_; }
  bool boolean() const { return boolean_; }
  const Decimal& number() const { return number_; }
  const std::string& string() const { return string_; }
  const std::vector<JsonValue>& items() const { return items_; }
  const std::vector<std::pair<std::string, JsonValue>>& members() const { return members_; }

  // Compact JSON text in member order, numbers in Decimal::ToString form.
  std::string ToJson() const;
  // Equal for JSON Schema-equal values (1 == 1.0, objects equal regardless of
  // member order): ToJson with object members sorted by key.
  std::string CanonicalKey() const;

 private:
  void Write(bool sort_keys, std::string* out) const;

  Kind kind_ = Kind::kNull;
  bool boolean_ = false;
  Decimal number_;
  std::string string_;
  std::vector<JsonValue> items_;
  std::vector<std::pair<std::string, JsonValue>> members_;
};

// Parses JSON text into a JsonValue (InvalidArgument if malformed).
absl::StatusOr<JsonValue> ParseJsonValue(std::string_view text);

// Where JSON nesting first exceeds `max_depth` (byte offset of the '[' or
// '{'), or -1: a linear scan, so callers refuse too deep a document before
// any recursive walk of it.
int64_t JsonDepthViolation(std::string_view text, int max_depth);

// Appends `s` as a JSON string literal (quotes, escapes for '"', '\\' and
// control characters; other bytes, UTF-8 included, unchanged).
void AppendJsonString(std::string_view s, std::string* out);

}  // namespace maskd::json_schema

#endif  // MASKD_COMPILER_JSON_SCHEMA_JSON_VALUE_H_
