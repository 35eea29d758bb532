// The bits of RFC 3986 and RFC 6901 that `$id`/`$ref` resolution needs.
#ifndef MASKD_COMPILER_JSON_SCHEMA_URI_H_
#define MASKD_COMPILER_JSON_SCHEMA_URI_H_

#include <string>
#include <string_view>

namespace maskd::json_schema {

// The base URI of a document that declares no `$id`.
inline constexpr std::string_view kDefaultBaseUri = "maskd:/schema.json";

// Resolves `reference` against the absolute URI `base` (RFC 3986 section 5.2,
// without query subtleties). The result keeps the reference's fragment.
std::string ResolveUri(std::string_view base, std::string_view reference);

// Splits "uri#fragment" at the first '#'; `fragment` excludes the '#'.
void SplitFragment(std::string_view uri, std::string* without_fragment, std::string* fragment);

// Decodes %XX escapes (invalid escapes are kept verbatim).
std::string PercentDecode(std::string_view s);

// One JSON pointer reference token: '~' -> "~0", '/' -> "~1".
std::string EscapePointerToken(std::string_view token);

}  // namespace maskd::json_schema

#endif  // MASKD_COMPILER_JSON_SCHEMA_URI_H_
