// Lowers a normalized JSON Schema (schema.h) to the grammar IR: a CFG whose
// lexemes are JSON tokens (punctuation, keys with their colon, strings,
// numbers, literals), each followed by the whitespace the options allow, so
// every gap between two tokens belongs to exactly one lexeme.
//
// What is exact: types, enum/const, strings (pattern, min/maxLength in code
// points, the formats of json_string.h) in their canonical encoding, numbers
// and integers with bounds (and integer multipleOf where numeric_regex.h can),
// arrays (prefixItems, items, min/maxItems), objects in schema order (declared
// properties in order, each optional unless required; other keys, checked
// against patternProperties/additionalProperties/propertyNames, anywhere in
// between; min/maxProperties), anyOf, oneOf with provably disjoint branches,
// recursion through $ref. Anything else (including formats this engine does
// not know) is refused with Unimplemented naming the keyword and its JSON
// pointer, never approximated.
#ifndef MASKD_COMPILER_JSON_SCHEMA_LOWER_H_
#define MASKD_COMPILER_JSON_SCHEMA_LOWER_H_

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
  // Past this, lowering stops with DeadlineExceeded (CompileOptions::time_limit_ms).
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
};

absl::StatusOr<GrammarIr> LowerSchema(const Schema& schema, const LowerOptions& options);

// The same lowering into an existing IR (a structural tag embeds schemas in a
// larger grammar): defines a fresh nonterminal for the schema's value and
// returns it; the IR's start is left alone.
absl::StatusOr<NonterminalId> LowerSchemaInto(const Schema& schema, const LowerOptions& options,
                                              GrammarIr& ir);

}  // namespace maskd::json_schema

#endif  // MASKD_COMPILER_JSON_SCHEMA_LOWER_H_
