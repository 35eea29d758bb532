#include "compiler/grammar_text/text_cursor.h"

namespace maskd::grammar_text {

std::optional<uint32_t> DecodeUtf8(TextCursor& cursor) {
  if (cursor.at_end()) return std::nullopt;
  const unsigned char c = static_cast<unsigned char>(cursor.peek());
  int len = 0;
  uint32_t cp = 0;
  if (c < 0x80) {
    len = 1;
    cp = c;
  } else if ((c >> 5) == 6) {
    len = 2;
    cp = c & 0x1F;
  } else if ((c >> 4) == 14) {
    len = 3;
    cp = c & 0x0F;
  } else if ((c >> 3) == 30) {
    len = 4;
    cp = c & 0x07;
  } else {
    return std::nullopt;
  }
  for (int i = 1; i < len; ++i) {
    const unsigned char d = static_cast<unsigned char>(cursor.peek(i));
    if ((d & 0xC0) != 0x80 || cursor.pos + i >= cursor.text.size()) return std::nullopt;
    cp = (cp << 6) | (d & 0x3F);
  }
  static constexpr uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kMin[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return std::nullopt;
  cursor.pos += len;
  return cp;
}

std::optional<uint32_t> ReadHex(TextCursor& cursor, int n) {
  uint32_t v = 0;
  for (int i = 0; i < n; ++i) {
    const char c = cursor.peek(i);
    int d;
    if (c >= '0' && c <= '9') {
      d = c - '0';
    } else if (c >= 'a' && c <= 'f') {
      d = c - 'a' + 10;
    } else if (c >= 'A' && c <= 'F') {
      d = c - 'A' + 10;
    } else {
      return std::nullopt;
    }
    v = v * 16 + static_cast<uint32_t>(d);
  }
  cursor.pos += n;
  return v;
}

std::optional<uint32_t> ReadRepeatCount(TextCursor& cursor) {
  uint64_t v = 0;
  while (cursor.peek() >= '0' && cursor.peek() <= '9') {
    v = v * 10 + static_cast<uint64_t>(cursor.peek() - '0');
    if (v > kMaxRepeatCount) return std::nullopt;
    ++cursor.pos;
  }
  return static_cast<uint32_t>(v);
}

}  // namespace maskd::grammar_text
