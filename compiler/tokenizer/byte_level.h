// The GPT-2 byte-to-unicode map used by byte-level BPE tokenizers: every byte
// is written as one printable code point in tokenizer.json (space is U+0120
// "Ġ"), so a vocabulary entry's characters map back to its exact bytes.
#ifndef MASKD_COMPILER_TOKENIZER_BYTE_LEVEL_H_
#define MASKD_COMPILER_TOKENIZER_BYTE_LEVEL_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace maskd::tokenizer_internal {

// The code point that stands for `byte`.
char32_t ByteToCodePoint(uint8_t byte);
// The byte a code point stands for, or nullopt when it is none of the 256.
std::optional<uint8_t> CodePointToByte(char32_t code_point);

// Decodes a byte-level string (UTF-8 of mapped code points) into raw bytes.
// nullopt when it holds a character outside the map or is not UTF-8.
std::optional<std::string> DecodeByteLevel(std::string_view mapped);
// The same into `out` (cleared first; its capacity is reused). False when
// DecodeByteLevel would give nullopt.
bool DecodeByteLevelInto(std::string_view mapped, std::string& out);
// The byte-level (mapped) form of raw bytes, as tokenizer.json writes it.
std::string EncodeByteLevel(std::string_view bytes);

}  // namespace maskd::tokenizer_internal

#endif  // MASKD_COMPILER_TOKENIZER_BYTE_LEVEL_H_
