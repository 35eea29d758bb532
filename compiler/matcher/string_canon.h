// The decoded bytes of a JSON string read byte by byte: what uniqueItems
// compares strings by. A code point from U+007F up has two spellings (as
// is, or a \uXXXX escape: json_schema/json_string.h), so `"é"`, `"\u00e9"`
// are one value; the byte stepper hashes what Feed writes instead of the
// bytes it reads (matcher/byte_stepper.h). Every other byte, escapes of
// ASCII (`\n`, `\"`, `\u001f`) included, is written as read: those have one
// spelling each.
#ifndef MASKD_COMPILER_MATCHER_STRING_CANON_H_
#define MASKD_COMPILER_MATCHER_STRING_CANON_H_

#include <cstdint>

#include "compiler/regex/utf8.h"

namespace maskd {

class StringCanon {
 public:
  // The most bytes one Feed writes (a broken surrogate pair's spelling).
  static constexpr int kMaxOut = 12;

  // Reads byte b; writes the bytes it completes to `out` and returns how
  // many (0 inside an escape).
  int Feed(uint8_t b, uint8_t* out) {
    switch (phase_) {
      case kPlain:
        if (b == '\\') {
          phase_ = kBackslash;
          return 0;
        }
        out[0] = b;
        return 1;
      case kBackslash:
        if (b == 'u') {
          phase_ = kHex1;
          unit_ = 0;
          digits_ = 0;
          return 0;
        }
        phase_ = kPlain;
        out[0] = '\\';
        out[1] = b;
        return 2;
      case kHex1:
      case kHex2: {
        const int v = HexValue(b);
        if (v < 0) return Abandon(b, out);
        unit_ = static_cast<uint16_t>((unit_ << 4) | v);
        if (++digits_ < 4) return 0;
        return phase_ == kHex1 ? FirstUnit(out) : SecondUnit(out);
      }
      case kPairBackslash:
        if (b == '\\') {
          phase_ = kPairU;
          return 0;
        }
        return Abandon(b, out);
      case kPairU:
        if (b == 'u') {
          phase_ = kHex2;
          high_ = unit_;
          unit_ = 0;
          digits_ = 0;
          return 0;
        }
        return Abandon(b, out);
    }
    return 0;
  }

  // Inside an escape: a quote read now is not the string's end.
  bool InEscape() const { return phase_ != kPlain; }
  friend bool operator==(const StringCanon&, const StringCanon&) = default;

 private:
  enum Phase : uint8_t { kPlain, kBackslash, kHex1, kPairBackslash, kPairU, kHex2 };

  static int HexValue(uint8_t b) {
    if (b >= '0' && b <= '9') return b - '0';
    if (b >= 'a' && b <= 'f') return b - 'a' + 10;
    if (b >= 'A' && b <= 'F') return b - 'A' + 10;
    return -1;
  }

  int FirstUnit(uint8_t* out) {
    if (unit_ >= 0xD800 && unit_ <= 0xDBFF) {
      phase_ = kPairBackslash;
      return 0;
    }
    phase_ = kPlain;
    if (unit_ < 0x7F || (unit_ >= 0xDC00 && unit_ <= 0xDFFF)) return Spell(unit_, out);
    return regex::EncodeUtf8(unit_, out);
  }
  int SecondUnit(uint8_t* out) {
    phase_ = kPlain;
    if (unit_ < 0xDC00 || unit_ > 0xDFFF) {
      // Not a pair (no json.dumps spelling; the grammar has none either):
      // both units as spelled, deterministically.
      const int n = Spell(high_, out);
      return n + Spell(unit_, out + n);
    }
    const uint32_t cp = 0x10000 + ((uint32_t{high_} - 0xD800) << 10) + (unit_ - 0xDC00);
    return regex::EncodeUtf8(cp, out);
  }
  // An escape cut short by b (no grammar allows one): what was read, as a
  // canonical spelling of its units so far, then b.
  int Abandon(uint8_t b, uint8_t* out) {
    int n = 0;
    if (phase_ == kPairBackslash || phase_ == kPairU) n = Spell(unit_, out);
    if (phase_ == kPairU) out[n++] = '\\';
    phase_ = kPlain;
    out[n++] = b;
    return n;
  }
  // `\u` and four lowercase hex digits.
  static int Spell(uint16_t unit, uint8_t* out) {
    static constexpr char kHex[] = "0123456789abcdef";
    out[0] = '\\';
    out[1] = 'u';
    for (int i = 0; i < 4; ++i)
      out[2 + i] = static_cast<uint8_t>(kHex[(unit >> (12 - 4 * i)) & 15]);
    return 6;
  }

  uint8_t phase_ = kPlain;
  uint8_t digits_ = 0;
  uint16_t unit_ = 0;
  uint16_t high_ = 0;
};

}  // namespace maskd

#endif  // MASKD_COMPILER_MATCHER_STRING_CANON_H_
