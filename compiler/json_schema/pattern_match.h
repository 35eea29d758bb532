// Whether a decoded string matches a JSON Schema `pattern`, decided by the
// same ECMA-262 engine (compiler/regex) that builds the grammar's string
// lexemes. Every decision a compile takes about a pattern on a concrete
// string (filtering enum/const values, telling oneOf branches apart,
// excluded values) goes through here, so it cannot disagree with the masks:
// RE2, used before, reads `\s` as ASCII-only where ECMA-262 includes U+00A0
// and the other Unicode spaces, and `{"oneOf":[{"enum":["\u00a0"]},
// {"pattern":"^\\s$"}]}` then accepted the value matching both branches.
#ifndef MASKD_COMPILER_JSON_SCHEMA_PATTERN_MATCH_H_
#define MASKD_COMPILER_JSON_SCHEMA_PATTERN_MATCH_H_

#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace maskd::json_schema {

// Search semantics (the pattern may match anywhere unless anchored), on the
// UTF-8 bytes of `value`. Fails with the regex front end's error when the
// pattern is outside what the engine accepts (look-around, back-references,
// malformed): the caller must then refuse, never guess.
absl::StatusOr<bool> EcmaPatternMatches(const std::string& pattern, std::string_view value);

}  // namespace maskd::json_schema

#endif  // MASKD_COMPILER_JSON_SCHEMA_PATTERN_MATCH_H_
