// unevaluatedProperties / unevaluatedItems, resolved at parse time where the
// set of evaluated properties or items does not depend on the instance.
//
// A keyword of those two applies to the members (items) that no adjacent
// keyword evaluated: the schema object's own properties, patternProperties,
// additionalProperties (prefixItems, items, ...) and those of every subschema
// applied in place. allOf branches and $ref targets are applied to every
// instance, and when one fails the whole schema fails, so what they evaluate
// is a fixed union: unevaluatedProperties U is then exactly "the members whose
// keys are none of these names and match none of these patterns match U", an
// additionalProperties-like constraint. anyOf, oneOf, if/then/else,
// dependentSchemas and the dynamic references evaluate only where they
// validate. Each such applicator is a choice between options, each a guard
// (what must hold for the option: some branches valid, `if` valid or not,
// a key present) and what the option evaluates; the caller makes the
// keyword an anyOf over every combination of options of "the guards hold and
// the members outside the union match U". That is exact because the
// closing is monotone (evaluating more only weakens it): the combination of
// the options that do hold is among them, and any combination whose guards
// hold evaluates no more than the instance's real evaluation does. A
// branch's options are its always-applied set with each combination of the
// options of the conditionals inside it (their guards added: they hold inside
// a valid branch, so the same argument applies), at most 64 per conditional.
// `contains` evaluates the items it matches: the closing's items are then
// "matches one of the contains schemas, or the unevaluated keyword's
// schema". Dynamic references whose target depends on the path are refused
// by name. `not` never evaluates (its annotations are dropped).
#ifndef MASKD_COMPILER_JSON_SCHEMA_UNEVALUATED_H_
#define MASKD_COMPILER_JSON_SCHEMA_UNEVALUATED_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/json_schema/schema.h"
#include "simdjson.h"

namespace maskd::json_schema {

enum class Unevaluated { kProperties, kItems };

struct SchemaAt {
  simdjson::dom::element value;
  std::string pointer;
};

// What the always-applied parts of a schema evaluate at its instance.
struct EvaluatedSet {
  bool all = false;                   // Every member / item.
  std::vector<std::string> names;     // properties (no duplicates).
  std::vector<std::string> patterns;  // patternProperties (no duplicates).
  uint64_t prefix = 0;                // Items 0..prefix-1.
  // `contains` subschemas: the items matching one are evaluated (where the
  // contains keyword holds, which it does wherever its schema applies).
  std::vector<SchemaAt> contains;  // No two at one pointer.
};

// What must hold for an option of a conditional applicator.
struct Guard {
  enum Kind { kValid, kInvalid, kKeyPresent } kind = kValid;
  SchemaAt schema;  // kValid / kInvalid.
  std::string key;  // kKeyPresent.
};
struct EvaluationOption {
  std::vector<Guard> guards;
  EvaluatedSet evaluated;
};
// The always-applied evaluation and one list of options per conditional
// applicator that evaluates something.
struct Evaluation {
  EvaluatedSet always;
  std::vector<std::vector<EvaluationOption>> choices;
};

struct EvaluationContext {
  Draft draft = Draft::kDraft2020_12;
  // Whether the schema's draft reads a keyword (others are not applied).
  std::function<bool(std::string_view)> known;
  // The target of the $ref in the schema at `pointer`.
  std::function<absl::StatusOr<SchemaAt>(std::string_view ref, const std::string& pointer)>
      resolve_ref;
  // The target of the $dynamicRef in the schema at `pointer` where it does
  // not depend on the path that reaches it (nullopt where it does).
  std::function<absl::StatusOr<std::optional<SchemaAt>>(std::string_view ref,
                                                        const std::string& pointer)>
      resolve_dynamic_ref;
};

// The evaluation of `schema` (its own `keyword` left out) for the
// unevaluated keyword at `keyword_pointer`; UNIMPLEMENTED naming the
// applicator where it cannot be written as choices.
// `into` evaluates what `from` does too.
void EvaluatedUnion(const EvaluatedSet& from, EvaluatedSet* into);

absl::StatusOr<Evaluation> EvaluatedBy(const SchemaAt& schema, Unevaluated kind,
                                       const EvaluationContext& context,
                                       const std::string& keyword_pointer);

}  // namespace maskd::json_schema

#endif  // MASKD_COMPILER_JSON_SCHEMA_UNEVALUATED_H_
