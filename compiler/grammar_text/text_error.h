// Errors that point into a grammar text: "line L:C: what" plus the offending
// line with a caret under the column, and the position as the
// maskd/line-column payload (compiler/errors/spec_location.h), which the
// service copies into CompileResponse.error.location.
#ifndef MASKD_COMPILER_GRAMMAR_TEXT_TEXT_ERROR_H_
#define MASKD_COMPILER_GRAMMAR_TEXT_TEXT_ERROR_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"

namespace maskd::grammar_text {

struct TextPosition {
  uint32_t line = 1;    // 1-based
  uint32_t column = 1;  // 1-based, in code points
  size_t byte_offset = 0;
};

TextPosition PositionOf(std::string_view text, size_t byte_offset);

// "line L:C: what" + excerpt, with the payload set.
absl::Status TextError(absl::StatusCode code, std::string_view text, size_t byte_offset,
                       std::string_view what);

// The (line, column) a TextError carries, if `status` has one.
std::optional<TextPosition> TextErrorPosition(const absl::Status& status);

}  // namespace maskd::grammar_text

#endif  // MASKD_COMPILER_GRAMMAR_TEXT_TEXT_ERROR_H_
