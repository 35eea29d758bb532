// Lowers a normalized JSON Schema (schema.h) to the grammar IR: a CFG whose
// lexemes are JSON tokens (punctuation, keys with their colon, strings,
// numbers, literals), each followed by the whitespace the options allow, so
// every gap between two tokens belongs to exactly one lexeme.
//
// What is exact: types, enum/const, strings (pattern, min/maxLength in code
// points, the formats of json_string.h) in their canonical encoding, numbers
// and integers with bounds (and multipleOf where numeric_regex.h can),
// arrays (prefixItems, items, min/maxItems, uniqueItems over finite scalar
// domains, open strings and unbounded numbers, contains with an expressible
// complement),
// objects in schema order (declared
// properties in order, each optional unless required; other keys, checked
// against patternProperties/additionalProperties/propertyNames, anywhere in
// between; min/maxProperties), anyOf, oneOf with provably disjoint branches,
// recursion through $ref. Anything else (including formats this engine does
// not know) is refused with Unimplemented naming the keyword and its JSON
// pointer, never approximated.
#ifndef MASKD_COMPILER_JSON_SCHEMA_LOWER_H_
#define MASKD_COMPILER_JSON_SCHEMA_LOWER_H_

#include <atomic>
#include <chrono>
#include <cstdint>

#include "absl/status/statusor.h"
#include "compiler/grammar/grammar_ir.h"
#include "compiler/json_schema/schema.h"

namespace maskd::json_schema {

enum class Whitespace { kCompact, kFlexible, kBounded };

struct LowerOptions {
  Whitespace whitespace = Whitespace::kBounded;
  uint32_t max_whitespace_run = 32;
  // Bounds on the grammar a schema may produce (counting min/max items and
  // properties multiplies nonterminals).
  uint32_t max_nonterminals = 200'000;
  uint64_t max_string_min_length = 100'000;
  // Object members in any order (each declared key at most once) instead of
  // the schema's order (any_order_members.h).
  bool any_order_properties = false;
  // Formats without an exact language: refused (false) or plain strings,
  // listed in GrammarIr::ignored_keywords (true).
  bool ignore_unknown_formats = false;
  // Bound on the member states of one any-order object: (required keys
  // written + 1) x (member count bound + 1).
  uint32_t max_any_order_states = 100'000;
  // Deepest group nesting of a pattern (CompileOptions::max_recursion_depth).
  int max_regex_nesting = 128;
  // Past this, lowering stops with DeadlineExceeded (CompileOptions::time_limit_ms).
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
  // When set and true, lowering stops with Cancelled at the next deadline
  // check (CompileOptions::cancelled).
  const std::atomic<bool>* cancelled = nullptr;
};

absl::StatusOr<GrammarIr> LowerSchema(const Schema& schema, const LowerOptions& options);

// The same lowering into an existing IR (a structural tag embeds schemas in a
// larger grammar): defines a fresh nonterminal for the schema's value and
// returns it; the IR's start is left alone.
absl::StatusOr<NonterminalId> LowerSchemaInto(const Schema& schema, const LowerOptions& options,
                                              GrammarIr& ir);

}  // namespace maskd::json_schema

#endif  // MASKD_COMPILER_JSON_SCHEMA_LOWER_H_
