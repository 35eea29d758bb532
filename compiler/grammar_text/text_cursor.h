// A read position in a grammar text with the small lexical helpers both
// grammar front ends share (UTF-8 decoding, hex digits).
#ifndef MASKD_COMPILER_GRAMMAR_TEXT_TEXT_CURSOR_H_
#define MASKD_COMPILER_GRAMMAR_TEXT_TEXT_CURSOR_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace maskd::grammar_text {

struct TextCursor {
  std::string_view text;
  size_t pos = 0;

  bool at_end() const { return pos >= text.size(); }
  char peek(size_t ahead = 0) const { return pos + ahead < text.size() ? text[pos + ahead] : '\0'; }
  bool starts_with(std::string_view s) const { return text.substr(pos).starts_with(s); }
  bool consume(std::string_view s) {
    if (!starts_with(s)) return false;
    pos += s.size();
    return true;
  }
};

// Decodes one UTF-8 code point at cursor.pos and advances; nullopt (cursor
// unchanged) on an invalid or truncated sequence.
std::optional<uint32_t> DecodeUtf8(TextCursor& cursor);

// `n` hex digits at cursor.pos as a number, advancing; nullopt if not.
std::optional<uint32_t> ReadHex(TextCursor& cursor, int n);

// Counted repetitions (`{m,n}` in GBNF/EBNF, `~ m..n` in Lark) beyond this
// are refused before anything is expanded.
inline constexpr uint32_t kMaxRepeatCount = 100'000;

// The decimal digits at cursor.pos as a number, advancing past them (0 when
// there are none); nullopt once the number passes kMaxRepeatCount.
std::optional<uint32_t> ReadRepeatCount(TextCursor& cursor);

}  // namespace maskd::grammar_text

#endif  // MASKD_COMPILER_GRAMMAR_TEXT_TEXT_CURSOR_H_
