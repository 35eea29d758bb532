// JSON string encodings as byte-level regexes. Constraints on strings
// (pattern, lengths, format, enum of keys) speak about the DECODED string; the
// model writes the ENCODED one. JsonQuote maps a language of decoded strings to
// the language of their encodings, exactly, in every spelling Python's
// json.dumps writes: `"` -> `\"`, `\` -> `\\`, control characters -> \n \r
// \t \b \f or \u00XX, and each code point from U+007F up either as is
// (ensure_ascii=False) or as a lowercase \uXXXX escape, astral ones as a
// UTF-16 surrogate pair \ud83d\ude00 (ensure_ascii=True); the two mix freely
// within one string. Other spellings (`\/`, `\u0041`, uppercase hex) are
// outside the language: no json.dumps writer produces them.
#ifndef MASKD_COMPILER_JSON_SCHEMA_JSON_STRING_H_
#define MASKD_COMPILER_JSON_SCHEMA_JSON_STRING_H_

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "compiler/regex/expr_set.h"

namespace maskd::json_schema {

// The encodings (without the surrounding quotes) of the strings of
// `decoded`. Exact for And/Not too: decoding is a function, so distinct
// decoded strings have disjoint sets of spellings.
regex::ExprId JsonQuote(regex::ExprSet& pool, regex::ExprId decoded);

// JsonQuote that remembers what it has quoted, for the whole of one
// lowering: every string and key of a schema quotes the same code point
// classes, and quoting a class that holds control characters builds 35
// escape literals. (A fresh memo per call spent a quarter of the compile of
// object-heavy schemas on quoting the same classes again.)
//
// A code point's UTF-8 bytes may sit in different nodes (a literal is a
// Concat chain of single bytes; a code point class is a trie whose first
// byte is the left side of a Concat), so a Concat whose left side can end
// inside a code point and whose right side can start with a continuation
// byte gets the escapes of the code points across it: with the left side a
// byte set of leading bytes, by the derivatives of the right side by every
// continuation (grouped by derivative); with an Or, by distributing. Any
// other such Concat (no front end builds one) is quoted with the raw
// spelling across it only, and counted in Unaligned(): callers refuse then.
class JsonQuoter {
 public:
  explicit JsonQuoter(regex::ExprSet& pool) : pool_(pool) {}
  regex::ExprId Quote(regex::ExprId decoded);
  // How many Concats were quoted without the escapes across them.
  size_t Unaligned() const { return unaligned_; }

 private:
  // How QuoteNode quotes a Concat whose sides meet inside a code point.
  struct Straddle {
    // Escaped code points and what follows each (a derivative of the right
    // side), or, when `distribute`, the Concats of each arm of the left side.
    std::vector<std::pair<regex::ExprId, regex::ExprId>> escapes;
    std::vector<regex::ExprId> arms;
    bool distribute = false;
    bool unaligned = false;
  };
  // What QuoteNode needs quoted first.
  std::vector<regex::ExprId> Children(regex::ExprId e);
  // Quotes e, whose children are all in memo_.
  regex::ExprId QuoteNode(regex::ExprId e);
  // The plan for Concat(x, y), or nullptr when no code point crosses it.
  const Straddle* PlanConcat(regex::ExprId e);
  // A sound over-approximation of the UTF-8 decoder states (utf8 states
  // 0..7 of json_string.cc) the strings of e can take each state to: bit
  // 8*from+to.
  uint64_t Utf8Relation(regex::ExprId e);
  // Whether no string of e ends inside a multi-byte code point.
  bool EndsOnBoundary(regex::ExprId e) { return ((Utf8Relation(e) & 0xFF) & ~uint64_t{1}) == 0; }
  // The spellings of every string of bytes (the universe Not complements in).
  regex::ExprId AnyEncoding();

  regex::ExprSet& pool_;
  absl::flat_hash_map<regex::ExprId, regex::ExprId> memo_;
  absl::flat_hash_map<regex::ExprId, Straddle> plans_;
  absl::flat_hash_map<regex::ExprId, uint64_t> relations_;
  // Nodes whose children are being quoted (a straddle's residual reaching
  // back to it is quoted unaligned instead of looping).
  absl::flat_hash_set<regex::ExprId> in_progress_;
  absl::flat_hash_set<regex::ExprId> cut_;
  regex::ExprId any_encoding_ = regex::ExprSet::kNothing;
  size_t unaligned_ = 0;
};

// The \u escapes (lowercase hex; a surrogate pair above U+FFFF) of the code
// points of `ranges` (normalized: sorted, disjoint, no surrogates).
regex::ExprId JsonEscapes(regex::ExprSet& pool, std::span<const regex::CodepointRange> ranges);

// `s` as a JSON string literal, quotes included, as json.dumps(ensure_ascii=False)
// writes it (the engine's canonical spelling: tests, harness, lexeme names).
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
