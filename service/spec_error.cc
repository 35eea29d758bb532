#include "service/spec_error.h"

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "compiler/compile/compile.h"

namespace maskd {
namespace {

// The JSON pointer after the last " at /" in `message`, up to ": " or the
// end; empty when there is none. (" at the root" names no pointer.)
std::string JsonPointerIn(absl::string_view message) {
  const size_t at = message.rfind(" at /");
  if (at == absl::string_view::npos) return "";
  absl::string_view rest = message.substr(at + 4);
  if (const size_t colon = rest.find(": "); colon != absl::string_view::npos) {
    rest = rest.substr(0, colon);
  }
  if (const size_t paren = rest.find(')'); paren != absl::string_view::npos) {
    rest = rest.substr(0, paren);
  }
  return std::string(absl::StripTrailingAsciiWhitespace(rest));
}

// The number after "offset " in `message`, if any.
bool ByteOffsetIn(absl::string_view message, uint64_t* offset) {
  const size_t at = message.rfind("offset ");
  if (at == absl::string_view::npos) return false;
  absl::string_view digits = message.substr(at + 7);
  size_t n = 0;
  while (n < digits.size() && absl::ascii_isdigit(static_cast<unsigned char>(digits[n]))) ++n;
  return n > 0 && absl::SimpleAtoi(digits.substr(0, n), offset);
}

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

}  // namespace

void FillError(const absl::Status& status, v1::Error* error) {
  error->set_code(static_cast<int32_t>(status.code()));
  error->set_message(std::string(status.message()));
}

void FillSpecError(const absl::Status& status, SpecKind kind, std::string_view spec_text,
                   v1::Error* error) {
  FillError(status, error);
  switch (kind) {
    case SpecKind::kJsonSchema:
      if (std::string pointer = JsonPointerIn(status.message()); !pointer.empty()) {
        error->mutable_location()->set_json_pointer(pointer);
      }
      break;
    case SpecKind::kRegex: {
      uint64_t offset = 0;
      if (ByteOffsetIn(status.message(), &offset)) {
        SetTextPosition(spec_text, offset, error->mutable_location()->mutable_text());
      }
      break;
    }
    default:
      break;
  }
}

}  // namespace maskd
