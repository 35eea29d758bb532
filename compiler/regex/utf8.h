// UTF-8 encoding of one code point, shared by the regex pool (code point
// ranges to byte ranges), the ECMA front end (error messages) and the tests.
#ifndef MASKD_COMPILER_REGEX_UTF8_H_
#define MASKD_COMPILER_REGEX_UTF8_H_

#include <cstdint>
#include <string>

namespace maskd::regex {

// Writes the 1-4 byte encoding of `cp` to `out` and returns its length.
inline int EncodeUtf8(uint32_t cp, uint8_t* out) {
  if (cp < 0x80) {
    out[0] = static_cast<uint8_t>(cp);
    return 1;
  }
  if (cp < 0x800) {
    out[0] = static_cast<uint8_t>(0xC0 | (cp >> 6));
    out[1] = static_cast<uint8_t>(0x80 | (cp & 0x3F));
    return 2;
  }
  if (cp < 0x10000) {
    out[0] = static_cast<uint8_t>(0xE0 | (cp >> 12));
    out[1] = static_cast<uint8_t>(0x80 | ((cp >> 6) & 0x3F));
    out[2] = static_cast<uint8_t>(0x80 | (cp & 0x3F));
    return 3;
  }
  out[0] = static_cast<uint8_t>(0xF0 | (cp >> 18));
  out[1] = static_cast<uint8_t>(0x80 | ((cp >> 12) & 0x3F));
  out[2] = static_cast<uint8_t>(0x80 | ((cp >> 6) & 0x3F));
  out[3] = static_cast<uint8_t>(0x80 | (cp & 0x3F));
  return 4;
}

inline std::string Utf8(uint32_t cp) {
  uint8_t buf[4];
  return std::string(reinterpret_cast<const char*>(buf), EncodeUtf8(cp, buf));
}

}  // namespace maskd::regex

#endif  // MASKD_COMPILER_REGEX_UTF8_H_
