#include "service/spec_error.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "compiler/compile/compile.h"
#include "compiler/errors/spec_location.h"
#include "service/bounded_text.h"

namespace maskd {
namespace {

// Line and column (from 1, columns in code points) of `offset` in `text`.
void SetTextPosition(std::string_view text, uint64_t offset, v1::TextPosition* position) {
  uint32_t line = 1;
  uint32_t column = 1;
  for (size_t i = 0; i < offset && i < text.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c == '\n') {
      ++line;
      column = 1;
    } else if ((c & 0xC0) != 0x80) {  // count code points, not continuation bytes
      ++column;
    }
  }
  position->set_line(line);
  position->set_column(column);
  position->set_byte_offset(offset);
}

// The byte offset of (line, column) in `text`, both from 1, columns in code
// points; the end of the text when it is shorter.
uint64_t ByteOffsetOfLineColumn(std::string_view text, uint32_t line, uint32_t column) {
  size_t i = 0;
  for (uint32_t l = 1; l < line && i < text.size(); ++i) {
    if (text[i] == '\n') ++l;
  }
  for (uint32_t c = 1; c < column && i < text.size(); ++c) {
    ++i;  // past the lead byte, then its continuation bytes
    while (i < text.size() && (static_cast<unsigned char>(text[i]) & 0xC0) == 0x80) ++i;
  }
  return i;
}

}  // namespace

void FillError(const absl::Status& status, v1::Error* error) {
  error->set_code(static_cast<int32_t>(status.code()));
  error->set_message(BoundedText(status.message()));
}

void FillSpecError(const absl::Status& status, SpecKind kind, std::string_view spec_text,
                   v1::Error* error) {
  FillError(status, error);
  switch (kind) {
    case SpecKind::kJsonSchema:
    case SpecKind::kStructuralTag:
      if (std::optional<std::string> pointer = JsonPointerOf(status);
          pointer.has_value() && !pointer->empty()) {
        error->mutable_location()->set_json_pointer(BoundedText(*pointer));
      }
      break;
    case SpecKind::kRegex:
      if (std::optional<uint64_t> offset = ByteOffsetOf(status); offset.has_value()) {
        SetTextPosition(spec_text, *offset, error->mutable_location()->mutable_text());
      }
      break;
    case SpecKind::kEbnf:
      if (std::optional<std::pair<uint32_t, uint32_t>> at = LineColumnOf(status); at.has_value()) {
        v1::TextPosition* position = error->mutable_location()->mutable_text();
        position->set_line(at->first);
        position->set_column(at->second);
        position->set_byte_offset(ByteOffsetOfLineColumn(spec_text, at->first, at->second));
      }
      break;
    default:
      break;
  }
}

}  // namespace maskd
