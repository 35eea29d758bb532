// Reading tokenizer.json's DOM parts with refusals that name the file and
// the JSON path they are about ("tokenizer.json: model.vocab is not an
// object"), shared by the model loader and the text pipeline's parser.
#ifndef MASKD_COMPILER_TOKENIZER_TOKENIZER_JSON_DOM_H_
#define MASKD_COMPILER_TOKENIZER_TOKENIZER_JSON_DOM_H_

#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "simdjson.h"

namespace maskd::tokenizer_internal {

// InvalidArgument "FILE: WHAT".
absl::Status Invalid(absl::string_view file, absl::string_view what);

// A short, printable rendering of a token for error messages.
std::string Quote(std::string_view text);

// Optional member access: nullopt when absent or null.
std::optional<simdjson::dom::element> Member(const simdjson::dom::object& obj,
                                             std::string_view key);

// obj[key] as a boolean, `fallback` when absent; `path` names obj in errors.
absl::StatusOr<bool> BoolMember(const simdjson::dom::object& obj, std::string_view key,
                                bool fallback, absl::string_view path);

// obj[key] as a string (required); `path` names obj in errors.
absl::StatusOr<std::string_view> StringMember(const simdjson::dom::object& obj,
                                              std::string_view key, absl::string_view path);

}  // namespace maskd::tokenizer_internal

#endif  // MASKD_COMPILER_TOKENIZER_TOKENIZER_JSON_DOM_H_
