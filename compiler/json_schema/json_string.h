// JSON string encodings as byte-level regexes. Constraints on strings
// (pattern, lengths, format, enum of keys) speak about the DECODED string; the
// model writes the ENCODED one. JsonQuote maps a language of decoded strings to
// the language of their canonical encodings, exactly: each byte is written as
// Python's json.dumps(ensure_ascii=False) writes it (`"` -> `\"`, `\` -> `\\`,
// control characters -> \n \r \t \b \f or \u00XX, everything else as is). The
// canonical spelling is the one MaskBench instances use; other spellings of the
// same string (`\/`, `\u0041`) are outside the language.
#ifndef MASKD_COMPILER_JSON_SCHEMA_JSON_STRING_H_
#define MASKD_COMPILER_JSON_SCHEMA_JSON_STRING_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "compiler/regex/expr_set.h"

namespace maskd::json_schema {

// The canonical encodings (without the surrounding quotes) of the strings of
// `decoded`. Exact for And/Not too: the encoding is an injective prefix code.
regex::ExprId JsonQuote(regex::ExprSet& pool, regex::ExprId decoded);

// JsonQuote that remembers what it has quoted, for the whole of one
// lowering: every string and key of a schema quotes the same code point
// classes, and quoting a class that holds control characters builds 35
// escape literals. (A fresh memo per call spent a quarter of the compile of
// object-heavy schemas on quoting the same classes again.)
class JsonQuoter {
 public:
  explicit JsonQuoter(regex::ExprSet& pool) : pool_(pool) {}
  regex::ExprId Quote(regex::ExprId decoded);

 private:
  // What QuoteNode needs quoted first.
  std::vector<regex::ExprId> Children(regex::ExprId e) const;
  // Quotes e, whose children are all in memo_.
  regex::ExprId QuoteNode(regex::ExprId e);

  regex::ExprSet& pool_;
  absl::flat_hash_map<regex::ExprId, regex::ExprId> memo_;
};

// `s` as a JSON string literal, quotes included, in the canonical encoding.
std::string JsonQuoteLiteral(std::string_view s);

// The language of a JSON Schema `format` over decoded strings: an ECMA-262
// pattern (full match) and, where the standard caps it, a length in code
// points. Unimplemented for an asserted format (IsAssertedFormat) this engine
// does not generate; NotFound for any other format, which is an annotation:
// validators ignore formats they do not know (JSON Schema 2020-12 §7.2);
// lowering still refuses them (see lower.cc).
struct FormatLanguage {
  std::string pattern;
  std::optional<uint32_t> max_length;
  // More patterns the string must match too (format_languages.h).
  std::vector<std::string> also;
};
absl::StatusOr<FormatLanguage> FormatPattern(std::string_view format);

// Formats that validators check: every format some JSON Schema draft
// defines, and the draft-3 ones (color, host-name, ip-address) that Python's
// jsonschema FormatChecker still asserts.
bool IsAssertedFormat(std::string_view format);

// Formats whose strings the grammar constrains: the asserted ones and those
// outside JSON Schema that the engine still enforces (OpenAPI's "byte").
// Complements and key witnesses must treat these as constraints: taking
// "byte" for an annotation made `{"not":{"format":"byte"}}` match nothing.
bool IsConstrainingFormat(std::string_view format);

}  // namespace maskd::json_schema

#endif  // MASKD_COMPILER_JSON_SCHEMA_JSON_STRING_H_
