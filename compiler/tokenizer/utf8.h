// UTF-8 helpers shared by the tokenizer stages: strict decoding of one code
// point, encoding, and the WHATWG "decode with replacement" that turns any
// byte string into the valid UTF-8 a JavaScript string of those bytes holds.
#ifndef MASKD_COMPILER_TOKENIZER_UTF8_H_
#define MASKD_COMPILER_TOKENIZER_UTF8_H_

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace maskd::tokenizer_internal {

// Decodes the well-formed code point at `pos` and advances `pos` past it.
// nullopt (pos unchanged) when the bytes there are not well-formed UTF-8.
std::optional<char32_t> NextCodePoint(std::string_view text, size_t& pos);

void AppendUtf8(char32_t code_point, std::string& out);

// Offset of the first byte that is not part of well-formed UTF-8, or npos.
size_t FindInvalidUtf8(std::string_view text);

// WHATWG UTF-8 decode (what TextDecoder and Python's errors="replace" do):
// every maximal subpart of an ill-formed sequence becomes one U+FFFD.
std::string ReplaceInvalidUtf8(std::string_view text);

}  // namespace maskd::tokenizer_internal

#endif  // MASKD_COMPILER_TOKENIZER_UTF8_H_
