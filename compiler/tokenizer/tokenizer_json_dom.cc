#include "compiler/tokenizer/tokenizer_json_dom.h"

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "compiler/tokenizer/string_view_compat.h"

namespace maskd::tokenizer_internal {

using simdjson::dom::element;
using simdjson::dom::object;

absl::Status Invalid(absl::string_view file, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(file, ": ", what));
}

// A short, printable rendering of a token for error messages.
std::string Quote(std::string_view text) {
  std::string shown(text.substr(0, 40));
  if (text.size() > 40) shown += "...";
  return absl::StrCat("\"", absl::CHexEscape(shown), "\"");
}

// Optional member access: nullopt when absent or null.
std::optional<element> Member(const object& obj, std::string_view key) {
  element value;
  if (obj.at_key(key).get(value) != simdjson::SUCCESS || value.is_null()) return std::nullopt;
  return value;
}

absl::StatusOr<bool> BoolMember(const object& obj, std::string_view key, bool fallback,
                                absl::string_view path) {
  const std::optional<element> value = Member(obj, key);
  if (!value.has_value()) return fallback;
  bool result;
  if (value->get(result) != simdjson::SUCCESS) {
    return Invalid("tokenizer.json", absl::StrCat(path, ".", AbslView(key), " is not a boolean"));
  }
  return result;
}

absl::StatusOr<std::string_view> StringMember(const object& obj, std::string_view key,
                                              absl::string_view path) {
  const std::optional<element> value = Member(obj, key);
  std::string_view result;
  if (!value.has_value() || value->get(result) != simdjson::SUCCESS) {
    return Invalid("tokenizer.json",
                   absl::StrCat(path, ".", AbslView(key), " is missing or not a string"));
  }
  return result;
}

}  // namespace maskd::tokenizer_internal
