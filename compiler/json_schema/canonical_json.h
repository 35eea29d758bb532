// One spelling per JSON document, so that a cache keyed by spec text treats
// `{"type": "string"}` (Python's json.dumps) and `{"type":"string"}` (a
// file sent by maskctl) as the same schema.
#ifndef MASKD_COMPILER_JSON_SCHEMA_CANONICAL_JSON_H_
#define MASKD_COMPILER_JSON_SCHEMA_CANONICAL_JSON_H_

#include <optional>
#include <string>
#include <string_view>

namespace maskd::json_schema {

// `text` without insignificant whitespace and with every string written in
// the canonical encoding (AppendJsonString: raw UTF-8, escapes only for '"',
// '\\' and control characters; so "\u00e9" and "é" agree). Member order,
// duplicate members and number spellings are kept as written: property order
// is part of a schema's language, and 1.0 vs 1 is for the schema parser to
// judge. nullopt when `text` is not valid JSON (then no rewriting is safe:
// dropping the space from "1 2" would make it valid).
std::optional<std::string> CanonicalJsonText(std::string_view text);

}  // namespace maskd::json_schema

#endif  // MASKD_COMPILER_JSON_SCHEMA_CANONICAL_JSON_H_
