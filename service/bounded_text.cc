#include "service/bounded_text.h"

#include <cstdint>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace maskd {
namespace {

// Length of the well-formed UTF-8 character starting at text[i], or 0.
size_t CharLength(absl::string_view text, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<uint8_t>(text[k]); };
  const uint8_t b0 = byte(i);
  if (b0 < 0x80) return 1;
  size_t n = 0;
  uint8_t lo = 0x80;
  uint8_t hi = 0xBF;
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    n = 2;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    n = 3;
    if (b0 == 0xE0) lo = 0xA0;  // overlong
    if (b0 == 0xED) hi = 0x9F;  // surrogates
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    n = 4;
    if (b0 == 0xF0) lo = 0x90;  // overlong
    if (b0 == 0xF4) hi = 0x8F;  // past U+10FFFF
  } else {
    return 0;
  }
  if (i + n > text.size()) return 0;
  if (byte(i + 1) < lo || byte(i + 1) > hi) return 0;
  for (size_t k = 2; k < n; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
  }
  return n;
}

}  // namespace

std::optional<size_t> FirstInvalidUtf8(absl::string_view text) {
  for (size_t i = 0; i < text.size();) {
    const size_t n = CharLength(text, i);
    if (n == 0) return i;
    i += n;
  }
  return std::nullopt;
}

std::string BoundedText(absl::string_view text, size_t max_bytes) {
  std::string out;
  out.reserve(std::min(text.size(), max_bytes) + 8);
  size_t i = 0;
  while (i < text.size()) {
    const size_t n = CharLength(text, i);
    const size_t written = n == 0 ? 4 : n;  // "\xNN" for an invalid byte
    if (out.size() + written > max_bytes) break;
    if (n == 0) {
      absl::StrAppendFormat(&out, "\\x%02X", static_cast<uint8_t>(text[i]));
      i += 1;
    } else {
      out.append(text.data() + i, n);
      i += n;
    }
  }
  if (i < text.size()) absl::StrAppend(&out, " ... [", text.size(), " bytes in all]");
  return out;
}

}  // namespace maskd
