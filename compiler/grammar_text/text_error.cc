#include "compiler/grammar_text/text_error.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "compiler/errors/spec_location.h"

namespace maskd::grammar_text {

TextPosition PositionOf(std::string_view text, size_t byte_offset) {
  TextPosition p;
  p.byte_offset = std::min(byte_offset, text.size());
  for (size_t i = 0; i < p.byte_offset; ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c == '\n') {
      ++p.line;
      p.column = 1;
    } else if ((c & 0xC0) != 0x80) {
      ++p.column;
    }
  }
  return p;
}

absl::Status TextError(absl::StatusCode code, std::string_view text, size_t byte_offset,
                       std::string_view what) {
  const TextPosition p = PositionOf(text, byte_offset);
  // The offending line, cut to 80 bytes around the column so a one-line
  // grammar of 1 MiB does not end up in the message.
  const size_t line_start = text.rfind('\n', p.byte_offset == 0 ? 0 : p.byte_offset - 1);
  size_t begin = (line_start == std::string_view::npos || p.byte_offset == 0) ? 0 : line_start + 1;
  if (text.substr(begin, p.byte_offset - begin).find('\n') != std::string_view::npos) {
    begin = p.byte_offset;
  }
  size_t end = text.find('\n', p.byte_offset);
  if (end == std::string_view::npos) end = text.size();
  if (p.byte_offset - begin > 40) begin = p.byte_offset - 40;
  end = std::min(end, p.byte_offset + 40);
  while (begin < p.byte_offset && (static_cast<unsigned char>(text[begin]) & 0xC0) == 0x80) ++begin;
  while (end < text.size() && end > p.byte_offset &&
         (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) {
    --end;
  }
  std::string excerpt(text.substr(begin, end - begin));
  for (char& c : excerpt) {
    if (c == '\t' || c == '\r') c = ' ';
  }
  size_t caret = 0;
  for (size_t i = begin; i < p.byte_offset; ++i) {
    if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) ++caret;
  }
  const absl::Status status(
      code, absl::StrCat("line ", p.line, ":", p.column, ": ", std::string(what), "\n  ", excerpt,
                         "\n  ", std::string(caret, ' '), "^"));
  return WithLineColumn(status, p.line, p.column);
}

std::optional<TextPosition> TextErrorPosition(const absl::Status& status) {
  std::optional<std::pair<uint32_t, uint32_t>> at = LineColumnOf(status);
  if (!at.has_value()) return std::nullopt;
  TextPosition p;
  p.line = at->first;
  p.column = at->second;
  return p;
}

}  // namespace maskd::grammar_text
