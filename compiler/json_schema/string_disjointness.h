// Whether two nodes' string constraints (patterns, min/maxLength) admit no
// common string, decided on their ECMA-262 regexes -- the question oneOf
// rewriting asks for every pair of branches (and again inside complements).
//
// One instance serves a whole normalization: every pattern is parsed once
// into one shared expression pool (parsing a pattern builds its Unicode
// classes, the bulk of the cost), derivatives and emptiness results carry
// over between questions, and each question is answered once. Asking a
// fresh pool per pair made a 64-branch oneOf of patterns compile in
// hundreds of milliseconds.
#ifndef MASKD_COMPILER_JSON_SCHEMA_STRING_DISJOINTNESS_H_
#define MASKD_COMPILER_JSON_SCHEMA_STRING_DISJOINTNESS_H_

#include <memory>
#include <optional>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "compiler/json_schema/schema.h"
#include "compiler/regex/expr_set.h"

namespace maskd::json_schema {

class StringDisjointness {
 public:
  StringDisjointness();

  // True only when no string meets both nodes' patterns and lengths; false
  // when they share one or it could not be decided within a small budget.
  bool ProvablyDisjoint(const SchemaNode& a, const SchemaNode& b);

 private:
  // The pattern's search-mode expression in pool_, or nullopt when the ECMA
  // front end refuses it.
  std::optional<regex::ExprId> Parse(const std::string& pattern);

  std::unique_ptr<regex::ExprSet> pool_;
  absl::flat_hash_map<std::string, std::optional<regex::ExprId>> parsed_;
  // Answers by the constraints asked about (both orders).
  absl::flat_hash_map<std::string, bool> answers_;
};

}  // namespace maskd::json_schema

#endif  // MASKD_COMPILER_JSON_SCHEMA_STRING_DISJOINTNESS_H_
