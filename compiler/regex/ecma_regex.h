// ECMA-262 regular expressions (the dialect of JSON Schema `pattern`) to
// byte-level expressions in an ExprSet.
//
// Supported: literals and escapes (\n \t \r \f \v \0 \xHH \uXXXX with
// surrogate pairs, \u{...}, \cX, escaped syntax characters), classes with
// ranges/negation/escapes, `.`, \d \D \w \W \s \S (ECMA sets), \p{..} / \P{..}
// general categories (see unicode_classes.h), quantifiers * + ? {n} {n,}
// {n,m} and their lazy forms (same language), groups (capturing, (?:..),
// named), alternation, and ^ / $ anywhere (they match only at the ends of
// the whole string; there is no multiline flag). Following Annex B, a `{`,
// `}` or `]` that starts no quantifier or class is a literal.
//
// Refused with InvalidArgument naming the construct and its offset (in code
// points): look-around, back-references, \b and \B, script properties,
// inline modifiers; malformed patterns likewise. Code points are matched as
// their UTF-8 encodings; lone surrogates match nothing.
#ifndef MASKD_COMPILER_REGEX_ECMA_REGEX_H_
#define MASKD_COMPILER_REGEX_ECMA_REGEX_H_

#include <string_view>

#include "absl/status/statusor.h"
#include "compiler/regex/expr_set.h"

namespace maskd::regex {

enum class MatchMode {
  // JSON Schema `pattern`: the string matches if the pattern matches
  // anywhere in it (unanchored unless ^ / $ say otherwise). The language is
  // then limited to valid UTF-8.
  kSearch,
  // The whole string must match the pattern.
  kFullMatch,
};

// Deepest group nesting accepted unless the caller asks for less (compiles
// pass CompileOptions::max_recursion_depth). The parser and the translation
// recurse once per level, so this also bounds their stack use.
inline constexpr int kDefaultMaxRegexNesting = 500;

// Parses `pattern` (UTF-8 text) and builds its language in `pool`. Groups
// nested more than `max_nesting` deep are InvalidArgument naming the limit
// and the offset.
absl::StatusOr<ExprId> ParseEcmaRegex(std::string_view pattern, ExprSet* pool,
                                      MatchMode mode = MatchMode::kSearch,
                                      int max_nesting = kDefaultMaxRegexNesting);

}  // namespace maskd::regex

#endif  // MASKD_COMPILER_REGEX_ECMA_REGEX_H_
