// The JSON Schema formats that need more than one pattern to say exactly:
// uri-template, idn-hostname, idn-email and byte. json_string.h's
// FormatPattern hands them out beside the others.
#ifndef MASKD_COMPILER_JSON_SCHEMA_FORMAT_LANGUAGES_H_
#define MASKD_COMPILER_JSON_SCHEMA_FORMAT_LANGUAGES_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace maskd::json_schema {

// A format as ECMA-262 patterns over decoded strings (full match) that a
// string must ALL match: one pattern gives the shape, the others limits a
// pattern cannot say beside it (label lengths, the whole length).
struct FormatPatterns {
  std::vector<std::string> all_of;
};

// The patterns of `format` if it is one of this file's formats.
std::optional<FormatPatterns> ExtendedFormatPatterns(std::string_view format);

}  // namespace maskd::json_schema

#endif  // MASKD_COMPILER_JSON_SCHEMA_FORMAT_LANGUAGES_H_
