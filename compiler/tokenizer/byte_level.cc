#include "compiler/tokenizer/byte_level.h"

#include <array>

#include "compiler/tokenizer/utf8.h"

namespace maskd::tokenizer_internal {
namespace {

// GPT-2's bytes_to_unicode(): printable Latin-1 bytes stand for themselves,
// the other 68 bytes take code points 256, 257, ... in byte order.
struct ByteMap {
  std::array<char32_t, 256> to_code_point{};
  // Every mapped code point is below 0x144, so a flat table inverts the map.
  std::array<int16_t, 0x144> to_byte{};

  ByteMap() {
    to_byte.fill(-1);
    char32_t next = 256;
    for (int b = 0; b < 256; ++b) {
      const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE);
      to_code_point[b] = printable ? static_cast<char32_t>(b) : next++;
      to_byte[to_code_point[b]] = static_cast<int16_t>(b);
    }
  }
};

const ByteMap& Map() {
  static const ByteMap* const map = new ByteMap();
  return *map;
}

}  // namespace

char32_t ByteToCodePoint(uint8_t byte) { return Map().to_code_point[byte]; }

std::optional<uint8_t> CodePointToByte(char32_t code_point) {
  if (code_point >= Map().to_byte.size() || Map().to_byte[code_point] < 0) return std::nullopt;
  return static_cast<uint8_t>(Map().to_byte[code_point]);
}

bool DecodeByteLevelInto(std::string_view mapped, std::string& out) {
  // The loader decodes every vocabulary entry and both halves of every merge
  // with this: the map is fetched once, and bytes are written in place.
  const ByteMap& map = Map();
  out.resize(mapped.size());  // Never more bytes than characters.
  size_t size = 0;
  size_t pos = 0;
  while (pos < mapped.size()) {
    // Every mapped code point is below U+0800: one or two UTF-8 bytes.
    const auto lead = static_cast<uint8_t>(mapped[pos]);
    std::optional<char32_t> cp;
    if (lead < 0x80) {
      cp = lead;
      ++pos;
    } else if (lead >= 0xC2 && lead <= 0xDF && pos + 1 < mapped.size() &&
               (static_cast<uint8_t>(mapped[pos + 1]) & 0xC0) == 0x80) {
      cp = (char32_t{lead & 0x1Fu} << 6) | (static_cast<uint8_t>(mapped[pos + 1]) & 0x3Fu);
      pos += 2;
    } else {
      cp = NextCodePoint(mapped, pos);
    }
    if (!cp.has_value() || *cp >= map.to_byte.size() || map.to_byte[*cp] < 0) {
      out.clear();
      return false;
    }
    out[size++] = static_cast<char>(map.to_byte[*cp]);
  }
  out.resize(size);
  return true;
}

std::optional<std::string> DecodeByteLevel(std::string_view mapped) {
  std::string bytes;
  if (!DecodeByteLevelInto(mapped, bytes)) return std::nullopt;
  return bytes;
}

std::string EncodeByteLevel(std::string_view bytes) {
  std::string mapped;
  mapped.reserve(bytes.size() * 2);
  for (char c : bytes) AppendUtf8(ByteToCodePoint(static_cast<uint8_t>(c)), mapped);
  return mapped;
}

}  // namespace maskd::tokenizer_internal
