#include "compiler/grammar_text/lark_options.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "compiler/grammar_text/text_error.h"
#include "compiler/json_schema/json_value.h"

namespace maskd::grammar_text {

using json_schema::JsonValue;

absl::Status MergeLlguidanceOptions(std::string_view json, std::string_view text, size_t at,
                                    LlguidanceOptions* options) {
  auto error = [&](absl::StatusCode code, std::string_view what) {
    return TextError(code, text, at, what);
  };
  absl::StatusOr<JsonValue> value = json_schema::ParseJsonValue(json);
  if (!value.ok()) {
    return error(absl::StatusCode::kInvalidArgument,
                 absl::StrCat("%llguidance options are not JSON: ", value.status().message()));
  }
  if (value->kind() != JsonValue::Kind::kObject) {
    return error(absl::StatusCode::kInvalidArgument, "%llguidance options must be a JSON object");
  }
  for (const auto& [key, v] : value->members()) {
    if (key == "no_forcing" || key == "allow_invalid_utf8") {
      if (v.kind() != JsonValue::Kind::kBoolean) {
        return error(absl::StatusCode::kInvalidArgument,
                     absl::StrCat("%llguidance option '", key, "' must be true or false"));
      }
      if (v.boolean()) {
        return error(absl::StatusCode::kUnimplemented,
                     absl::StrCat("%llguidance option '", key, "': true is not supported",
                                  key == "no_forcing"
                                      ? " (maskd's jump-forward offers cannot be switched off "
                                        "per grammar)"
                                      : " (maskd's lexemes are valid UTF-8)"));
      }
      continue;
    }
    if (key == "skip_repetition") {
      if (v.kind() != JsonValue::Kind::kString || (v.string() != "many" && v.string() != "once")) {
        return error(absl::StatusCode::kInvalidArgument,
                     "%llguidance option 'skip_repetition' must be \"many\" or \"once\"");
      }
      options->skip_once = v.string() == "once";
      continue;
    }
    return error(absl::StatusCode::kUnimplemented,
                 absl::StrCat("%llguidance option '", key, "' is not supported"));
  }
  return absl::OkStatus();
}

}  // namespace maskd::grammar_text
