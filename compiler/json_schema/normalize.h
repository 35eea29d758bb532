// After parsing: merges allOf/$ref conjunctions into nodes where that is
// exact, removes types a node's own constraints rule out, filters enums, and
// marks what matches nothing (types 0, with the reason in `unsatisfiable`;
// a root that matches nothing is a schema with an empty language, not an
// error). Finally marks oneOf nodes whose branches are provably disjoint.
//
// Merging follows the conjunction field by field: types intersect, minimums
// take the max and maximums the min, patterns and multipleOf accumulate,
// properties combine (a key on both sides gets a new node, the conjunction of
// both), required and dependentRequired unite, items/additionalProperties/
// propertyNames conjoin. Parts that one node cannot hold twice (two anyOf
// lists, two `not`s, two if/then/else rules, two `contains`, two formats, or
// one side's non-trivial additionalProperties beside the other side's
// patternProperties) stay in `all_of` as separate nodes, so nothing is ever approximated.
#ifndef MASKD_COMPILER_JSON_SCHEMA_NORMALIZE_H_
#define MASKD_COMPILER_JSON_SCHEMA_NORMALIZE_H_

#include "absl/status/status.h"
#include "compiler/json_schema/schema.h"
#include "compiler/json_schema/string_disjointness.h"

namespace maskd::json_schema {

// With `rewrite_combinators`, also rewrites the combinators of every node
// reachable from the root into anyOf where that is exact (normalizer.h).
absl::Status NormalizeSchema(Schema* schema, int max_nodes, bool rewrite_combinators = true);

// Whether `value` satisfies the node's own type and scalar constraints
// (type, enum, string length and patterns where RE2 can evaluate them,
// numeric bounds and multipleOf, item and property counts, required keys).
// Sub-schemas (properties, items, combinators) are not consulted, so `true`
// means "not excluded locally".
bool ValueMatchesLocally(const SchemaNode& node, const JsonValue& value);
// The same without the enum membership test (a caller that tests membership
// itself, with a set, for enums of thousands of values).
bool ValueMatchesLocallyBesidesEnum(const SchemaNode& node, const JsonValue& value);

// Conservative: true only if no instance whose type is in `within` can
// match both nodes. oneOf branches need to be told apart only on the types
// their parent admits: `{"type":"object","oneOf":[{"required":["a"],...},
// ...]}` has branches that all match any string, yet no object matches two.
// `strings` (optional) answers the string questions on one shared pattern
// pool; a fresh one is used per call without it.
bool ProvablyDisjoint(const Schema& schema, NodeId a, NodeId b, int depth = 0,
                      TypeSet within = kAllTypes, StringDisjointness* strings = nullptr);

}  // namespace maskd::json_schema

#endif  // MASKD_COMPILER_JSON_SCHEMA_NORMALIZE_H_
