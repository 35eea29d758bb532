#include "compiler/tokenizer/utf8.h"

#include <cstdint>

namespace maskd::tokenizer_internal {
namespace {

// Length of the well-formed prefix of a sequence starting at text[pos]
// (Unicode Table 3-7), and whether it is complete. A lead byte that can
// start nothing has a prefix of length 0.
struct Prefix {
  size_t length;
  bool complete;
  char32_t code_point;
};

Prefix WellFormedPrefix(std::string_view text, size_t pos) {
  const auto byte = [&](size_t i) { return static_cast<uint8_t>(text[i]); };
  const uint8_t lead = byte(pos);
  if (lead < 0x80) return {1, true, lead};
  size_t need;
  uint8_t lo = 0x80, hi = 0xBF;
  char32_t cp;
  if (lead >= 0xC2 && lead <= 0xDF) {
    need = 1;
    cp = lead & 0x1F;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    need = 2;
    cp = lead & 0x0F;
    if (lead == 0xE0) lo = 0xA0;
    if (lead == 0xED) hi = 0x9F;  // No surrogates.
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    need = 3;
    cp = lead & 0x07;
    if (lead == 0xF0) lo = 0x90;
    if (lead == 0xF4) hi = 0x8F;  // Nothing above U+10FFFF.
  } else {
    return {0, false, 0};
  }
  size_t i = 1;
  for (; i <= need; ++i) {
    if (pos + i >= text.size()) return {i, false, 0};
    const uint8_t b = byte(pos + i);
    if (b < lo || b > hi) return {i, false, 0};
    lo = 0x80;
    hi = 0xBF;
    cp = (cp << 6) | (b & 0x3F);
  }
  return {i, true, cp};
}

}  // namespace

std::optional<char32_t> NextCodePoint(std::string_view text, size_t& pos) {
  if (pos >= text.size()) return std::nullopt;
  const Prefix prefix = WellFormedPrefix(text, pos);
  if (!prefix.complete) return std::nullopt;
  pos += prefix.length;
  return prefix.code_point;
}

void AppendUtf8(char32_t cp, std::string& out) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

size_t FindInvalidUtf8(std::string_view text) {
  size_t pos = 0;
  while (pos < text.size()) {
    if (static_cast<uint8_t>(text[pos]) < 0x80) {
      ++pos;
      continue;
    }
    const Prefix prefix = WellFormedPrefix(text, pos);
    if (!prefix.complete) return pos;
    pos += prefix.length;
  }
  return std::string_view::npos;
}

std::string ReplaceInvalidUtf8(std::string_view text) {
  const size_t first_bad = FindInvalidUtf8(text);
  if (first_bad == std::string_view::npos) return std::string(text);
  std::string out(text.substr(0, first_bad));
  size_t pos = first_bad;
  while (pos < text.size()) {
    const Prefix prefix = WellFormedPrefix(text, pos);
    if (prefix.complete) {
      out.append(text.substr(pos, prefix.length));
      pos += prefix.length;
    } else {
      out.append("\xEF\xBF\xBD");
      // The maximal subpart is consumed; an unusable lead byte alone.
      pos += prefix.length == 0 ? 1 : prefix.length;
    }
  }
  return out;
}

}  // namespace maskd::tokenizer_internal
