#include "compiler/json_schema/canonical_json.h"

#include <cstdint>

#include "compiler/json_schema/json_value.h"
#include "compiler/regex/utf8.h"
#include "simdjson.h"

namespace maskd::json_schema {
namespace {

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// The 4 hex digits at text[i..i+4) (validated JSON has them).
uint32_t Hex4(std::string_view text, size_t i) {
  uint32_t v = 0;
  for (size_t k = 0; k < 4; ++k) v = (v << 4) | static_cast<uint32_t>(HexDigit(text[i + k]));
  return v;
}

// Decodes the string literal whose opening quote is at text[i]; sets `end`
// past its closing quote. False for a lone surrogate escape, which has no
// UTF-8 form (such text is hashed as written).
bool DecodeString(std::string_view text, size_t i, size_t& end, std::string& decoded) {
  for (++i; text[i] != '"'; ++i) {
    if (text[i] != '\\') {
      decoded.push_back(text[i]);
      continue;
    }
    const char e = text[++i];
    switch (e) {
      case 'b':
        decoded.push_back('\b');
        break;
      case 'f':
        decoded.push_back('\f');
        break;
      case 'n':
        decoded.push_back('\n');
        break;
      case 'r':
        decoded.push_back('\r');
        break;
      case 't':
        decoded.push_back('\t');
        break;
      case 'u': {
        uint32_t cp = Hex4(text, i + 1);
        i += 4;
        if (cp >= 0xDC00 && cp <= 0xDFFF) return false;
        if (cp >= 0xD800 && cp <= 0xDBFF) {
          if (i + 6 >= text.size() || text[i + 1] != '\\' || text[i + 2] != 'u') return false;
          const uint32_t low = Hex4(text, i + 3);
          if (low < 0xDC00 || low > 0xDFFF) return false;
          cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
          i += 6;
        }
        decoded += regex::Utf8(cp);
        break;
      }
      default:  // '"', '\\', '/'
        decoded.push_back(e);
    }
  }
  end = i + 1;
  return true;
}

}  // namespace

std::optional<std::string> CanonicalJsonText(std::string_view text) {
  simdjson::dom::parser parser;
  simdjson::padded_string padded(text);
  simdjson::dom::element root;
  if (parser.parse(padded).get(root) != simdjson::SUCCESS) return std::nullopt;
  std::string out;
  out.reserve(text.size());
  std::string decoded;
  for (size_t i = 0; i < text.size();) {
    const char c = text[i];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      ++i;
    } else if (c == '"') {
      decoded.clear();
      if (!DecodeString(text, i, i, decoded)) return std::nullopt;
      AppendJsonString(decoded, &out);
    } else {
      out.push_back(c);
      ++i;
    }
  }
  return out;
}

}  // namespace maskd::json_schema
